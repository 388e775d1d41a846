CREATE TABLE "people_anon" AS
WITH "__sa_lookup0" AS (
  SELECT
    *
  FROM (VALUES
    ('20', '20-29', '<40', '*'),
    ('21', '20-29', '<40', '*'),
    ('22', '20-29', '<40', '*'),
    ('23', '20-29', '<40', '*'),
    ('24', '20-29', '<40', '*'),
    ('25', '20-29', '<40', '*'),
    ('26', '20-29', '<40', '*'),
    ('27', '20-29', '<40', '*'),
    ('28', '20-29', '<40', '*'),
    ('29', '20-29', '<40', '*'),
    ('30', '30-39', '<40', '*'),
    ('31', '30-39', '<40', '*'),
    ('32', '30-39', '<40', '*'),
    ('33', '30-39', '<40', '*'),
    ('34', '30-39', '<40', '*'),
    ('35', '30-39', '<40', '*'),
    ('36', '30-39', '<40', '*'),
    ('37', '30-39', '<40', '*'),
    ('38', '30-39', '<40', '*'),
    ('39', '30-39', '<40', '*'),
    ('40', '40-49', '>=40', '*'),
    ('41', '40-49', '>=40', '*'),
    ('42', '40-49', '>=40', '*'),
    ('43', '40-49', '>=40', '*'),
    ('44', '40-49', '>=40', '*'),
    ('45', '40-49', '>=40', '*'),
    ('46', '40-49', '>=40', '*'),
    ('47', '40-49', '>=40', '*'),
    ('48', '40-49', '>=40', '*'),
    ('49', '40-49', '>=40', '*'),
    ('50', '50-59', '>=40', '*'),
    ('51', '50-59', '>=40', '*'),
    ('52', '50-59', '>=40', '*'),
    ('53', '50-59', '>=40', '*'),
    ('54', '50-59', '>=40', '*'),
    ('55', '50-59', '>=40', '*'),
    ('56', '50-59', '>=40', '*'),
    ('57', '50-59', '>=40', '*'),
    ('58', '50-59', '>=40', '*'),
    ('59', '50-59', '>=40', '*')) AS __sa_v(__sa_leaf, __sa_l1, __sa_l2, __sa_l3)
), "__sa_freq" AS (
  SELECT
    "age",
    "zip",
    "sex",
    "disease",
    COUNT(*) AS "__sa_n"
  FROM "people"
  GROUP BY
    "age",
    "zip",
    "sex",
    "disease"
), "__sa_gen" AS (
  SELECT
    "__sa_h0"."__sa_l2" AS "age",
    CASE CAST("__sa_src"."zip" AS VARCHAR)
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
    END AS "zip",
    "__sa_src"."sex" AS "sex",
    "__sa_src"."disease" AS "disease",
    "__sa_src"."__sa_n" AS "__sa_n"
  FROM "__sa_freq" AS "__sa_src"
  LEFT JOIN "__sa_lookup0" AS "__sa_h0"
    ON "__sa_h0"."__sa_leaf" = CAST("__sa_src"."age" AS VARCHAR)
), "__sa_classes" AS (
  SELECT
    "age",
    "zip",
    "sex",
    SUM("__sa_n") AS "__sa_size"
  FROM "__sa_gen"
  GROUP BY
    "age",
    "zip",
    "sex"
), "__sa_stats" AS (
  SELECT
    "c"."age",
    "c"."zip",
    "c"."sex",
    "c"."__sa_size"
  FROM "__sa_classes" AS "c"
), "__sa_verdict" AS (
  SELECT
    *,
    "__sa_ok0" AS "__sa_keep"
  FROM (
    SELECT
      *,
      COALESCE((
        "__sa_size" >= 2
      ), FALSE) AS "__sa_ok0"
    FROM "__sa_stats"
  ) AS __sa_v0
), "__sa_totals" AS (
  SELECT
    *,
    SUM("__sa_size") OVER () AS "__sa_rows",
    SUM(CASE WHEN NOT "__sa_keep" THEN "__sa_size" ELSE 0 END) OVER () AS "__sa_outlier_rows"
  FROM "__sa_verdict"
)
SELECT
  "__sa_r"."id" AS "id",
  CASE
    WHEN "__sa_r"."name" IS NULL
    THEN NULL
    ELSE LOWER(
      TO_HEX(
        SHA256(TO_UTF8(CONCAT('golden-salt-4f9c2a7e', CAST("__sa_r"."name" AS VARCHAR))))
      )
    )
  END AS "name",
  "__sa_r"."age" AS "age",
  "__sa_r"."zip" AS "zip",
  "__sa_r"."sex" AS "sex",
  "__sa_r"."disease" AS "disease"
FROM (
  SELECT
    "__sa_h0"."__sa_l2" AS "age",
    CASE CAST("__sa_src"."zip" AS VARCHAR)
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
    END AS "zip",
    "__sa_src"."sex" AS "sex",
    "__sa_src"."id" AS "id",
    "__sa_src"."name" AS "name",
    "__sa_src"."disease" AS "disease"
  FROM "people" AS "__sa_src"
  LEFT JOIN "__sa_lookup0" AS "__sa_h0"
    ON "__sa_h0"."__sa_leaf" = CAST("__sa_src"."age" AS VARCHAR)
) AS "__sa_r"
INNER JOIN "__sa_totals" AS "__sa_k"
  ON "__sa_r"."age" IS NOT DISTINCT FROM "__sa_k"."age"
  AND "__sa_r"."zip" IS NOT DISTINCT FROM "__sa_k"."zip"
  AND "__sa_r"."sex" IS NOT DISTINCT FROM "__sa_k"."sex"
WHERE
  CASE
    WHEN "__sa_k"."__sa_outlier_rows" <= FLOOR(CAST(0.3 AS DOUBLE) * CAST("__sa_k"."__sa_rows" AS DOUBLE))
    THEN "__sa_k"."__sa_keep"
    ELSE CAST(CONCAT(
      'sqlanon: not anonymous: ',
      CAST("__sa_k"."__sa_outlier_rows" AS VARCHAR),
      ' rows are in classes that fail the privacy models, more than the suppression limit 0.3 allows of ',
      CAST("__sa_k"."__sa_rows" AS VARCHAR),
      ' rows'
    ) AS INTEGER) = 0
  END;
