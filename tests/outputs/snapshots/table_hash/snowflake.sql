CREATE TABLE "PEOPLE_ANON" AS
WITH "__SA_LOOKUP0" AS (
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
    ('59', '50-59', '>=40', '*')) AS "__SA_V"("__SA_LEAF", "__SA_L1", "__SA_L2", "__SA_L3")
), "__SA_FREQ" AS (
  SELECT
    "AGE",
    "ZIP",
    "SEX",
    "DISEASE",
    COUNT(*) AS "__SA_N"
  FROM "PEOPLE"
  GROUP BY
    "AGE",
    "ZIP",
    "SEX",
    "DISEASE"
), "__SA_GEN" AS (
  SELECT
    "__SA_H0"."__SA_L2" AS "AGE",
    CASE CAST("__SA_SRC"."ZIP" AS VARCHAR)
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
    END AS "ZIP",
    "__SA_SRC"."SEX" AS "SEX",
    "__SA_SRC"."DISEASE" AS "DISEASE",
    "__SA_SRC"."__SA_N" AS "__SA_N"
  FROM "__SA_FREQ" AS "__SA_SRC"
  LEFT JOIN "__SA_LOOKUP0" AS "__SA_H0"
    ON "__SA_H0"."__SA_LEAF" = CAST("__SA_SRC"."AGE" AS VARCHAR)
), "__SA_CLASSES" AS (
  SELECT
    "AGE",
    "ZIP",
    "SEX",
    SUM("__SA_N") AS "__SA_SIZE"
  FROM "__SA_GEN"
  GROUP BY
    "AGE",
    "ZIP",
    "SEX"
), "__SA_STATS" AS (
  SELECT
    "C"."AGE",
    "C"."ZIP",
    "C"."SEX",
    "C"."__SA_SIZE"
  FROM "__SA_CLASSES" AS "C"
), "__SA_VERDICT" AS (
  SELECT
    *,
    "__SA_OK0" AS "__SA_KEEP"
  FROM (
    SELECT
      *,
      COALESCE((
        "__SA_SIZE" >= 2
      ), FALSE) AS "__SA_OK0"
    FROM "__SA_STATS"
  ) AS "__SA_V0"
), "__SA_TOTALS" AS (
  SELECT
    *,
    SUM("__SA_SIZE") OVER () AS "__SA_ROWS",
    SUM(CASE WHEN NOT "__SA_KEEP" THEN "__SA_SIZE" ELSE 0 END) OVER () AS "__SA_OUTLIER_ROWS"
  FROM "__SA_VERDICT"
)
SELECT
  "__SA_R"."ID" AS "ID",
  CASE
    WHEN "__SA_R"."NAME" IS NULL
    THEN NULL
    ELSE SHA2(CONCAT('golden-salt-4f9c2a7e', CAST("__SA_R"."NAME" AS VARCHAR)), 256)
  END AS "NAME",
  "__SA_R"."AGE" AS "AGE",
  "__SA_R"."ZIP" AS "ZIP",
  "__SA_R"."SEX" AS "SEX",
  "__SA_R"."DISEASE" AS "DISEASE"
FROM (
  SELECT
    "__SA_H0"."__SA_L2" AS "AGE",
    CASE CAST("__SA_SRC"."ZIP" AS VARCHAR)
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
    END AS "ZIP",
    "__SA_SRC"."SEX" AS "SEX",
    "__SA_SRC"."ID" AS "ID",
    "__SA_SRC"."NAME" AS "NAME",
    "__SA_SRC"."DISEASE" AS "DISEASE"
  FROM "PEOPLE" AS "__SA_SRC"
  LEFT JOIN "__SA_LOOKUP0" AS "__SA_H0"
    ON "__SA_H0"."__SA_LEAF" = CAST("__SA_SRC"."AGE" AS VARCHAR)
) AS "__SA_R"
INNER JOIN "__SA_TOTALS" AS "__SA_K"
  ON "__SA_R"."AGE" IS NOT DISTINCT FROM "__SA_K"."AGE"
  AND "__SA_R"."ZIP" IS NOT DISTINCT FROM "__SA_K"."ZIP"
  AND "__SA_R"."SEX" IS NOT DISTINCT FROM "__SA_K"."SEX"
WHERE
  CASE
    WHEN "__SA_K"."__SA_OUTLIER_ROWS" <= FLOOR(CAST(0.3 AS DOUBLE) * CAST("__SA_K"."__SA_ROWS" AS DOUBLE))
    THEN "__SA_K"."__SA_KEEP"
    ELSE CAST(CONCAT(
      'sqlanon: not anonymous: ',
      CAST("__SA_K"."__SA_OUTLIER_ROWS" AS VARCHAR),
      ' rows are in classes that fail the privacy models, more than the suppression limit 0.3 allows of ',
      CAST("__SA_K"."__SA_ROWS" AS VARCHAR),
      ' rows'
    ) AS INT) = 0
  END;
