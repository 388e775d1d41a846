CREATE TABLE `people_anon` AS
WITH `__sa_lookup0` AS (
  SELECT
    *
  FROM UNNEST([
    STRUCT('20' AS __sa_leaf, '20-29' AS __sa_l1, '<40' AS __sa_l2, '*' AS __sa_l3),
    STRUCT('21' AS __sa_leaf, '20-29' AS __sa_l1, '<40' AS __sa_l2, '*' AS __sa_l3),
    STRUCT('22' AS __sa_leaf, '20-29' AS __sa_l1, '<40' AS __sa_l2, '*' AS __sa_l3),
    STRUCT('23' AS __sa_leaf, '20-29' AS __sa_l1, '<40' AS __sa_l2, '*' AS __sa_l3),
    STRUCT('24' AS __sa_leaf, '20-29' AS __sa_l1, '<40' AS __sa_l2, '*' AS __sa_l3),
    STRUCT('25' AS __sa_leaf, '20-29' AS __sa_l1, '<40' AS __sa_l2, '*' AS __sa_l3),
    STRUCT('26' AS __sa_leaf, '20-29' AS __sa_l1, '<40' AS __sa_l2, '*' AS __sa_l3),
    STRUCT('27' AS __sa_leaf, '20-29' AS __sa_l1, '<40' AS __sa_l2, '*' AS __sa_l3),
    STRUCT('28' AS __sa_leaf, '20-29' AS __sa_l1, '<40' AS __sa_l2, '*' AS __sa_l3),
    STRUCT('29' AS __sa_leaf, '20-29' AS __sa_l1, '<40' AS __sa_l2, '*' AS __sa_l3),
    STRUCT('30' AS __sa_leaf, '30-39' AS __sa_l1, '<40' AS __sa_l2, '*' AS __sa_l3),
    STRUCT('31' AS __sa_leaf, '30-39' AS __sa_l1, '<40' AS __sa_l2, '*' AS __sa_l3),
    STRUCT('32' AS __sa_leaf, '30-39' AS __sa_l1, '<40' AS __sa_l2, '*' AS __sa_l3),
    STRUCT('33' AS __sa_leaf, '30-39' AS __sa_l1, '<40' AS __sa_l2, '*' AS __sa_l3),
    STRUCT('34' AS __sa_leaf, '30-39' AS __sa_l1, '<40' AS __sa_l2, '*' AS __sa_l3),
    STRUCT('35' AS __sa_leaf, '30-39' AS __sa_l1, '<40' AS __sa_l2, '*' AS __sa_l3),
    STRUCT('36' AS __sa_leaf, '30-39' AS __sa_l1, '<40' AS __sa_l2, '*' AS __sa_l3),
    STRUCT('37' AS __sa_leaf, '30-39' AS __sa_l1, '<40' AS __sa_l2, '*' AS __sa_l3),
    STRUCT('38' AS __sa_leaf, '30-39' AS __sa_l1, '<40' AS __sa_l2, '*' AS __sa_l3),
    STRUCT('39' AS __sa_leaf, '30-39' AS __sa_l1, '<40' AS __sa_l2, '*' AS __sa_l3),
    STRUCT('40' AS __sa_leaf, '40-49' AS __sa_l1, '>=40' AS __sa_l2, '*' AS __sa_l3),
    STRUCT('41' AS __sa_leaf, '40-49' AS __sa_l1, '>=40' AS __sa_l2, '*' AS __sa_l3),
    STRUCT('42' AS __sa_leaf, '40-49' AS __sa_l1, '>=40' AS __sa_l2, '*' AS __sa_l3),
    STRUCT('43' AS __sa_leaf, '40-49' AS __sa_l1, '>=40' AS __sa_l2, '*' AS __sa_l3),
    STRUCT('44' AS __sa_leaf, '40-49' AS __sa_l1, '>=40' AS __sa_l2, '*' AS __sa_l3),
    STRUCT('45' AS __sa_leaf, '40-49' AS __sa_l1, '>=40' AS __sa_l2, '*' AS __sa_l3),
    STRUCT('46' AS __sa_leaf, '40-49' AS __sa_l1, '>=40' AS __sa_l2, '*' AS __sa_l3),
    STRUCT('47' AS __sa_leaf, '40-49' AS __sa_l1, '>=40' AS __sa_l2, '*' AS __sa_l3),
    STRUCT('48' AS __sa_leaf, '40-49' AS __sa_l1, '>=40' AS __sa_l2, '*' AS __sa_l3),
    STRUCT('49' AS __sa_leaf, '40-49' AS __sa_l1, '>=40' AS __sa_l2, '*' AS __sa_l3),
    STRUCT('50' AS __sa_leaf, '50-59' AS __sa_l1, '>=40' AS __sa_l2, '*' AS __sa_l3),
    STRUCT('51' AS __sa_leaf, '50-59' AS __sa_l1, '>=40' AS __sa_l2, '*' AS __sa_l3),
    STRUCT('52' AS __sa_leaf, '50-59' AS __sa_l1, '>=40' AS __sa_l2, '*' AS __sa_l3),
    STRUCT('53' AS __sa_leaf, '50-59' AS __sa_l1, '>=40' AS __sa_l2, '*' AS __sa_l3),
    STRUCT('54' AS __sa_leaf, '50-59' AS __sa_l1, '>=40' AS __sa_l2, '*' AS __sa_l3),
    STRUCT('55' AS __sa_leaf, '50-59' AS __sa_l1, '>=40' AS __sa_l2, '*' AS __sa_l3),
    STRUCT('56' AS __sa_leaf, '50-59' AS __sa_l1, '>=40' AS __sa_l2, '*' AS __sa_l3),
    STRUCT('57' AS __sa_leaf, '50-59' AS __sa_l1, '>=40' AS __sa_l2, '*' AS __sa_l3),
    STRUCT('58' AS __sa_leaf, '50-59' AS __sa_l1, '>=40' AS __sa_l2, '*' AS __sa_l3),
    STRUCT('59' AS __sa_leaf, '50-59' AS __sa_l1, '>=40' AS __sa_l2, '*' AS __sa_l3)
  ]) AS __sa_v
), `__sa_freq` AS (
  SELECT
    `age`,
    `zip`,
    `sex`,
    `disease`,
    COUNT(*) AS `__sa_n`
  FROM `people`
  GROUP BY
    `age`,
    `zip`,
    `sex`,
    `disease`
), `__sa_gen` AS (
  SELECT
    `__sa_h0`.`__sa_l2` AS `age`,
    CASE CAST(`__sa_src`.`zip` AS STRING)
      WHEN '47601'
      THEN '476**'
      WHEN '47602'
      THEN '476**'
      WHEN '47605'
      THEN '476**'
      WHEN '47607'
      THEN '476**'
      WHEN '47673'
      THEN '476**'
      WHEN '47677'
      THEN '476**'
      WHEN '47678'
      THEN '476**'
      WHEN '47905'
      THEN '479**'
      WHEN '47906'
      THEN '479**'
      WHEN '47909'
      THEN '479**'
      WHEN '47911'
      THEN '479**'
    END AS `zip`,
    `__sa_src`.`sex` AS `sex`,
    `__sa_src`.`disease` AS `disease`,
    `__sa_src`.`__sa_n` AS `__sa_n`
  FROM `__sa_freq` AS `__sa_src`
  LEFT JOIN `__sa_lookup0` AS `__sa_h0`
    ON `__sa_h0`.`__sa_leaf` = CAST(`__sa_src`.`age` AS STRING)
), `__sa_classes` AS (
  SELECT
    `age`,
    `zip`,
    `sex`,
    SUM(`__sa_n`) AS `__sa_size`
  FROM `__sa_gen`
  GROUP BY
    `age`,
    `zip`,
    `sex`
), `__sa_stats` AS (
  SELECT
    `c`.`age`,
    `c`.`zip`,
    `c`.`sex`,
    `c`.`__sa_size`
  FROM `__sa_classes` AS `c`
), `__sa_verdict` AS (
  SELECT
    *,
    `__sa_ok0` AS `__sa_keep`
  FROM (
    SELECT
      *,
      COALESCE((
        `__sa_size` >= 2
      ), FALSE) AS `__sa_ok0`
    FROM `__sa_stats`
  ) AS __sa_v0
), `__sa_totals` AS (
  SELECT
    *,
    SUM(`__sa_size`) OVER () AS `__sa_rows`,
    SUM(CASE WHEN NOT `__sa_keep` THEN `__sa_size` ELSE 0 END) OVER () AS `__sa_outlier_rows`
  FROM `__sa_verdict`
)
SELECT
  `__sa_r`.`id` AS `id`,
  CASE
    WHEN `__sa_r`.`name` IS NULL
    THEN NULL
    ELSE TO_HEX(SHA256(CONCAT('golden-salt-4f9c2a7e', CAST(`__sa_r`.`name` AS STRING))))
  END AS `name`,
  `__sa_r`.`age` AS `age`,
  `__sa_r`.`zip` AS `zip`,
  `__sa_r`.`sex` AS `sex`,
  `__sa_r`.`disease` AS `disease`
FROM (
  SELECT
    `__sa_h0`.`__sa_l2` AS `age`,
    CASE CAST(`__sa_src`.`zip` AS STRING)
      WHEN '47601'
      THEN '476**'
      WHEN '47602'
      THEN '476**'
      WHEN '47605'
      THEN '476**'
      WHEN '47607'
      THEN '476**'
      WHEN '47673'
      THEN '476**'
      WHEN '47677'
      THEN '476**'
      WHEN '47678'
      THEN '476**'
      WHEN '47905'
      THEN '479**'
      WHEN '47906'
      THEN '479**'
      WHEN '47909'
      THEN '479**'
      WHEN '47911'
      THEN '479**'
    END AS `zip`,
    `__sa_src`.`sex` AS `sex`,
    `__sa_src`.`id` AS `id`,
    `__sa_src`.`name` AS `name`,
    `__sa_src`.`disease` AS `disease`
  FROM `people` AS `__sa_src`
  LEFT JOIN `__sa_lookup0` AS `__sa_h0`
    ON `__sa_h0`.`__sa_leaf` = CAST(`__sa_src`.`age` AS STRING)
) AS `__sa_r`
INNER JOIN `__sa_totals` AS `__sa_k`
  ON `__sa_r`.`age` IS NOT DISTINCT FROM `__sa_k`.`age`
  AND `__sa_r`.`zip` IS NOT DISTINCT FROM `__sa_k`.`zip`
  AND `__sa_r`.`sex` IS NOT DISTINCT FROM `__sa_k`.`sex`
WHERE
  CASE
    WHEN `__sa_k`.`__sa_outlier_rows` <= FLOOR(CAST(0.3 AS FLOAT64) * CAST(`__sa_k`.`__sa_rows` AS FLOAT64))
    THEN `__sa_k`.`__sa_keep`
    ELSE CAST(CONCAT(
      'sqlanon: not anonymous: ',
      CAST(`__sa_k`.`__sa_outlier_rows` AS STRING),
      ' rows are in classes that fail the privacy models, more than the suppression limit 0.3 allows of ',
      CAST(`__sa_k`.`__sa_rows` AS STRING),
      ' rows'
    ) AS INT64) = 0
  END;
