-- One statement: BigQuery replaces the table atomically once the query has succeeded.
CREATE OR REPLACE TABLE `people` AS
WITH `__sa_lookup0` AS (
  SELECT
    *
  FROM UNNEST([
    STRUCT('0' AS __sa_leaf, '0-9' AS __sa_l1, '<40' AS __sa_l2, '*' AS __sa_l3),
    STRUCT('1' AS __sa_leaf, '0-9' AS __sa_l1, '<40' AS __sa_l2, '*' AS __sa_l3),
    STRUCT('2' AS __sa_leaf, '0-9' AS __sa_l1, '<40' AS __sa_l2, '*' AS __sa_l3),
    STRUCT('3' AS __sa_leaf, '0-9' AS __sa_l1, '<40' AS __sa_l2, '*' AS __sa_l3),
    STRUCT('4' AS __sa_leaf, '0-9' AS __sa_l1, '<40' AS __sa_l2, '*' AS __sa_l3),
    STRUCT('5' AS __sa_leaf, '0-9' AS __sa_l1, '<40' AS __sa_l2, '*' AS __sa_l3),
    STRUCT('6' AS __sa_leaf, '0-9' AS __sa_l1, '<40' AS __sa_l2, '*' AS __sa_l3),
    STRUCT('7' AS __sa_leaf, '0-9' AS __sa_l1, '<40' AS __sa_l2, '*' AS __sa_l3),
    STRUCT('8' AS __sa_leaf, '0-9' AS __sa_l1, '<40' AS __sa_l2, '*' AS __sa_l3),
    STRUCT('9' AS __sa_leaf, '0-9' AS __sa_l1, '<40' AS __sa_l2, '*' AS __sa_l3),
    STRUCT('10' AS __sa_leaf, '10-19' AS __sa_l1, '<40' AS __sa_l2, '*' AS __sa_l3),
    STRUCT('11' AS __sa_leaf, '10-19' AS __sa_l1, '<40' AS __sa_l2, '*' AS __sa_l3),
    STRUCT('12' AS __sa_leaf, '10-19' AS __sa_l1, '<40' AS __sa_l2, '*' AS __sa_l3),
    STRUCT('13' AS __sa_leaf, '10-19' AS __sa_l1, '<40' AS __sa_l2, '*' AS __sa_l3),
    STRUCT('14' AS __sa_leaf, '10-19' AS __sa_l1, '<40' AS __sa_l2, '*' AS __sa_l3),
    STRUCT('15' AS __sa_leaf, '10-19' AS __sa_l1, '<40' AS __sa_l2, '*' AS __sa_l3),
    STRUCT('16' AS __sa_leaf, '10-19' AS __sa_l1, '<40' AS __sa_l2, '*' AS __sa_l3),
    STRUCT('17' AS __sa_leaf, '10-19' AS __sa_l1, '<40' AS __sa_l2, '*' AS __sa_l3),
    STRUCT('18' AS __sa_leaf, '10-19' AS __sa_l1, '<40' AS __sa_l2, '*' AS __sa_l3),
    STRUCT('19' AS __sa_leaf, '10-19' AS __sa_l1, '<40' AS __sa_l2, '*' AS __sa_l3),
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
    STRUCT('59' AS __sa_leaf, '50-59' AS __sa_l1, '>=40' AS __sa_l2, '*' AS __sa_l3),
    STRUCT('60' AS __sa_leaf, '60-69' AS __sa_l1, '>=40' AS __sa_l2, '*' AS __sa_l3),
    STRUCT('61' AS __sa_leaf, '60-69' AS __sa_l1, '>=40' AS __sa_l2, '*' AS __sa_l3),
    STRUCT('62' AS __sa_leaf, '60-69' AS __sa_l1, '>=40' AS __sa_l2, '*' AS __sa_l3),
    STRUCT('63' AS __sa_leaf, '60-69' AS __sa_l1, '>=40' AS __sa_l2, '*' AS __sa_l3),
    STRUCT('64' AS __sa_leaf, '60-69' AS __sa_l1, '>=40' AS __sa_l2, '*' AS __sa_l3),
    STRUCT('65' AS __sa_leaf, '60-69' AS __sa_l1, '>=40' AS __sa_l2, '*' AS __sa_l3),
    STRUCT('66' AS __sa_leaf, '60-69' AS __sa_l1, '>=40' AS __sa_l2, '*' AS __sa_l3),
    STRUCT('67' AS __sa_leaf, '60-69' AS __sa_l1, '>=40' AS __sa_l2, '*' AS __sa_l3),
    STRUCT('68' AS __sa_leaf, '60-69' AS __sa_l1, '>=40' AS __sa_l2, '*' AS __sa_l3),
    STRUCT('69' AS __sa_leaf, '60-69' AS __sa_l1, '>=40' AS __sa_l2, '*' AS __sa_l3),
    STRUCT('70' AS __sa_leaf, '70-79' AS __sa_l1, '>=40' AS __sa_l2, '*' AS __sa_l3),
    STRUCT('71' AS __sa_leaf, '70-79' AS __sa_l1, '>=40' AS __sa_l2, '*' AS __sa_l3),
    STRUCT('72' AS __sa_leaf, '70-79' AS __sa_l1, '>=40' AS __sa_l2, '*' AS __sa_l3),
    STRUCT('73' AS __sa_leaf, '70-79' AS __sa_l1, '>=40' AS __sa_l2, '*' AS __sa_l3),
    STRUCT('74' AS __sa_leaf, '70-79' AS __sa_l1, '>=40' AS __sa_l2, '*' AS __sa_l3),
    STRUCT('75' AS __sa_leaf, '70-79' AS __sa_l1, '>=40' AS __sa_l2, '*' AS __sa_l3),
    STRUCT('76' AS __sa_leaf, '70-79' AS __sa_l1, '>=40' AS __sa_l2, '*' AS __sa_l3),
    STRUCT('77' AS __sa_leaf, '70-79' AS __sa_l1, '>=40' AS __sa_l2, '*' AS __sa_l3),
    STRUCT('78' AS __sa_leaf, '70-79' AS __sa_l1, '>=40' AS __sa_l2, '*' AS __sa_l3),
    STRUCT('79' AS __sa_leaf, '70-79' AS __sa_l1, '>=40' AS __sa_l2, '*' AS __sa_l3),
    STRUCT('80' AS __sa_leaf, '80-89' AS __sa_l1, '>=40' AS __sa_l2, '*' AS __sa_l3),
    STRUCT('81' AS __sa_leaf, '80-89' AS __sa_l1, '>=40' AS __sa_l2, '*' AS __sa_l3),
    STRUCT('82' AS __sa_leaf, '80-89' AS __sa_l1, '>=40' AS __sa_l2, '*' AS __sa_l3),
    STRUCT('83' AS __sa_leaf, '80-89' AS __sa_l1, '>=40' AS __sa_l2, '*' AS __sa_l3),
    STRUCT('84' AS __sa_leaf, '80-89' AS __sa_l1, '>=40' AS __sa_l2, '*' AS __sa_l3),
    STRUCT('85' AS __sa_leaf, '80-89' AS __sa_l1, '>=40' AS __sa_l2, '*' AS __sa_l3),
    STRUCT('86' AS __sa_leaf, '80-89' AS __sa_l1, '>=40' AS __sa_l2, '*' AS __sa_l3),
    STRUCT('87' AS __sa_leaf, '80-89' AS __sa_l1, '>=40' AS __sa_l2, '*' AS __sa_l3),
    STRUCT('88' AS __sa_leaf, '80-89' AS __sa_l1, '>=40' AS __sa_l2, '*' AS __sa_l3),
    STRUCT('89' AS __sa_leaf, '80-89' AS __sa_l1, '>=40' AS __sa_l2, '*' AS __sa_l3),
    STRUCT('90' AS __sa_leaf, '90-99' AS __sa_l1, '>=40' AS __sa_l2, '*' AS __sa_l3),
    STRUCT('91' AS __sa_leaf, '90-99' AS __sa_l1, '>=40' AS __sa_l2, '*' AS __sa_l3),
    STRUCT('92' AS __sa_leaf, '90-99' AS __sa_l1, '>=40' AS __sa_l2, '*' AS __sa_l3),
    STRUCT('93' AS __sa_leaf, '90-99' AS __sa_l1, '>=40' AS __sa_l2, '*' AS __sa_l3),
    STRUCT('94' AS __sa_leaf, '90-99' AS __sa_l1, '>=40' AS __sa_l2, '*' AS __sa_l3),
    STRUCT('95' AS __sa_leaf, '90-99' AS __sa_l1, '>=40' AS __sa_l2, '*' AS __sa_l3),
    STRUCT('96' AS __sa_leaf, '90-99' AS __sa_l1, '>=40' AS __sa_l2, '*' AS __sa_l3),
    STRUCT('97' AS __sa_leaf, '90-99' AS __sa_l1, '>=40' AS __sa_l2, '*' AS __sa_l3),
    STRUCT('98' AS __sa_leaf, '90-99' AS __sa_l1, '>=40' AS __sa_l2, '*' AS __sa_l3),
    STRUCT('99' AS __sa_leaf, '90-99' AS __sa_l1, '>=40' AS __sa_l2, '*' AS __sa_l3)
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
), `__sa_hist0` AS (
  SELECT
    *,
    MAX(`__sa_vr`) OVER () AS `__sa_dom`
  FROM (
    SELECT
      *,
      SUM(`__sa_c`) OVER (PARTITION BY `age`, `zip`, `sex`) AS `__sa_size`,
      SUM(`__sa_c`) OVER (PARTITION BY `__sa_v`) AS `__sa_gc`,
      SUM(`__sa_c`) OVER () AS `__sa_total`,
      ROW_NUMBER() OVER (PARTITION BY `age`, `zip`, `sex` ORDER BY `__sa_c` DESC, `__sa_v` NULLS LAST) AS `__sa_rk`,
      DENSE_RANK() OVER (ORDER BY `__sa_v` NULLS LAST) AS `__sa_vr`
    FROM (
      SELECT
        `age`,
        `zip`,
        `sex`,
        `disease` AS `__sa_v`,
        SUM(`__sa_n`) AS `__sa_c`
      FROM `__sa_gen`
      GROUP BY
        `age`,
        `zip`,
        `sex`,
        `disease`
    ) AS __sa_h0
  ) AS __sa_h1
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
    `c`.`__sa_size`,
    `a0`.`__sa_entropy_attribute_disease`,
    `a0`.`__sa_equaldistance_attribute_disease`
  FROM `__sa_classes` AS `c`
  LEFT JOIN (
    SELECT
      `age`,
      `zip`,
      `sex`,
      -SUM(
        CAST(`__sa_c` AS FLOAT64) / `__sa_size` * LN(CAST(`__sa_c` AS FLOAT64) / `__sa_size`)
      ) AS `__sa_entropy_attribute_disease`,
      (
        1.0 + SUM(
          ABS(
            CAST(`__sa_gc` AS FLOAT64) / `__sa_total` - CAST(`__sa_c` AS FLOAT64) / `__sa_size`
          ) - CAST(`__sa_gc` AS FLOAT64) / `__sa_total`
        )
      ) / 2.0 AS `__sa_equaldistance_attribute_disease`
    FROM `__sa_hist0`
    GROUP BY
      `age`,
      `zip`,
      `sex`
  ) AS `a0`
    ON `c`.`age` IS NOT DISTINCT FROM `a0`.`age`
    AND `c`.`zip` IS NOT DISTINCT FROM `a0`.`zip`
    AND `c`.`sex` IS NOT DISTINCT FROM `a0`.`sex`
), `__sa_verdict` AS (
  SELECT
    *,
    `__sa_ok0` AND `__sa_ok1` AS `__sa_keep`
  FROM (
    SELECT
      *,
      COALESCE((
        `__sa_entropy_attribute_disease` >= 0.4054651081071644
      ), FALSE) AS `__sa_ok0`,
      COALESCE((
        `__sa_equaldistance_attribute_disease` <= 0.500000000001
      ), FALSE) AS `__sa_ok1`
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
    ELSE DENSE_RANK() OVER (
      ORDER BY CASE
        WHEN `__sa_r`.`name` IS NULL
        THEN NULL
        ELSE TO_HEX(SHA256(CONCAT('golden-salt-4f9c2a7e', CAST(`__sa_r`.`name` AS STRING))))
      END NULLS LAST
    )
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
    WHEN `__sa_k`.`__sa_outlier_rows` <= FLOOR(CAST(1.0 AS FLOAT64) * CAST(`__sa_k`.`__sa_rows` AS FLOAT64))
    THEN `__sa_k`.`__sa_keep`
    ELSE CAST(CONCAT(
      'sqlanon: not anonymous: ',
      CAST(`__sa_k`.`__sa_outlier_rows` AS STRING),
      ' rows are in classes that fail the privacy models, more than the suppression limit 1 allows of ',
      CAST(`__sa_k`.`__sa_rows` AS STRING),
      ' rows'
    ) AS INT64) = 0
  END;
