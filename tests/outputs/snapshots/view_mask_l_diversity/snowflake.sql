CREATE VIEW "PEOPLE_RELEASE" AS
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
), "__SA_HIST0" AS (
  SELECT
    *,
    MAX("__SA_VR") OVER () AS "__SA_DOM"
  FROM (
    SELECT
      *,
      SUM("__SA_C") OVER (PARTITION BY "AGE", "ZIP", "SEX") AS "__SA_SIZE",
      SUM("__SA_C") OVER (PARTITION BY "__SA_V") AS "__SA_GC",
      SUM("__SA_C") OVER () AS "__SA_TOTAL",
      ROW_NUMBER() OVER (PARTITION BY "AGE", "ZIP", "SEX" ORDER BY "__SA_C" DESC NULLS LAST, "__SA_V") AS "__SA_RK",
      DENSE_RANK() OVER (ORDER BY "__SA_V") AS "__SA_VR"
    FROM (
      SELECT
        "AGE",
        "ZIP",
        "SEX",
        "DISEASE" AS "__SA_V",
        SUM("__SA_N") AS "__SA_C"
      FROM "__SA_GEN"
      GROUP BY
        "AGE",
        "ZIP",
        "SEX",
        "DISEASE"
    ) AS "__SA_H0"
  ) AS "__SA_H1"
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
    "C"."__SA_SIZE",
    "A0"."__SA_DISTINCTCOUNT_ATTRIBUTE_DISEASE"
  FROM "__SA_CLASSES" AS "C"
  LEFT JOIN (
    SELECT
      "AGE",
      "ZIP",
      "SEX",
      COUNT(*) AS "__SA_DISTINCTCOUNT_ATTRIBUTE_DISEASE"
    FROM "__SA_HIST0"
    GROUP BY
      "AGE",
      "ZIP",
      "SEX"
  ) AS "A0"
    ON "C"."AGE" IS NOT DISTINCT FROM "A0"."AGE"
    AND "C"."ZIP" IS NOT DISTINCT FROM "A0"."ZIP"
    AND "C"."SEX" IS NOT DISTINCT FROM "A0"."SEX"
), "__SA_VERDICT" AS (
  SELECT
    *,
    "__SA_OK0" AND "__SA_OK1" AS "__SA_KEEP"
  FROM (
    SELECT
      *,
      COALESCE((
        "__SA_SIZE" >= 2
      ), FALSE) AS "__SA_OK0",
      COALESCE((
        "__SA_DISTINCTCOUNT_ATTRIBUTE_DISEASE" >= 2
      ), FALSE) AS "__SA_OK1"
    FROM "__SA_STATS"
  ) AS "__SA_V0"
)
SELECT
  "__SA_R"."ID" AS "ID",
  LPAD('', CAST(LENGTH(CAST("__SA_R"."NAME" AS VARCHAR)) AS INT), '*') AS "NAME",
  CASE WHEN "__SA_K"."__SA_KEEP" THEN CAST("__SA_R"."AGE" AS VARCHAR) ELSE '*' END AS "AGE",
  CASE WHEN "__SA_K"."__SA_KEEP" THEN CAST("__SA_R"."ZIP" AS VARCHAR) ELSE '*' END AS "ZIP",
  CASE WHEN "__SA_K"."__SA_KEEP" THEN CAST("__SA_R"."SEX" AS VARCHAR) ELSE '*' END AS "SEX",
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
INNER JOIN "__SA_VERDICT" AS "__SA_K"
  ON "__SA_R"."AGE" IS NOT DISTINCT FROM "__SA_K"."AGE"
  AND "__SA_R"."ZIP" IS NOT DISTINCT FROM "__SA_K"."ZIP"
  AND "__SA_R"."SEX" IS NOT DISTINCT FROM "__SA_K"."SEX";
