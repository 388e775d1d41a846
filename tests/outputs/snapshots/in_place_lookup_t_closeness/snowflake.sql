-- Snowflake commits each DDL statement on its own; SWAP WITH exchanges the two tables atomically.
CREATE TABLE "__SA_STAGE_C9022680F888" AS
WITH "__SA_LOOKUP0" AS (
  SELECT
    *
  FROM (VALUES
    ('0', '0-9', '<40', '*'),
    ('1', '0-9', '<40', '*'),
    ('2', '0-9', '<40', '*'),
    ('3', '0-9', '<40', '*'),
    ('4', '0-9', '<40', '*'),
    ('5', '0-9', '<40', '*'),
    ('6', '0-9', '<40', '*'),
    ('7', '0-9', '<40', '*'),
    ('8', '0-9', '<40', '*'),
    ('9', '0-9', '<40', '*'),
    ('10', '10-19', '<40', '*'),
    ('11', '10-19', '<40', '*'),
    ('12', '10-19', '<40', '*'),
    ('13', '10-19', '<40', '*'),
    ('14', '10-19', '<40', '*'),
    ('15', '10-19', '<40', '*'),
    ('16', '10-19', '<40', '*'),
    ('17', '10-19', '<40', '*'),
    ('18', '10-19', '<40', '*'),
    ('19', '10-19', '<40', '*'),
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
    ('59', '50-59', '>=40', '*'),
    ('60', '60-69', '>=40', '*'),
    ('61', '60-69', '>=40', '*'),
    ('62', '60-69', '>=40', '*'),
    ('63', '60-69', '>=40', '*'),
    ('64', '60-69', '>=40', '*'),
    ('65', '60-69', '>=40', '*'),
    ('66', '60-69', '>=40', '*'),
    ('67', '60-69', '>=40', '*'),
    ('68', '60-69', '>=40', '*'),
    ('69', '60-69', '>=40', '*'),
    ('70', '70-79', '>=40', '*'),
    ('71', '70-79', '>=40', '*'),
    ('72', '70-79', '>=40', '*'),
    ('73', '70-79', '>=40', '*'),
    ('74', '70-79', '>=40', '*'),
    ('75', '70-79', '>=40', '*'),
    ('76', '70-79', '>=40', '*'),
    ('77', '70-79', '>=40', '*'),
    ('78', '70-79', '>=40', '*'),
    ('79', '70-79', '>=40', '*'),
    ('80', '80-89', '>=40', '*'),
    ('81', '80-89', '>=40', '*'),
    ('82', '80-89', '>=40', '*'),
    ('83', '80-89', '>=40', '*'),
    ('84', '80-89', '>=40', '*'),
    ('85', '80-89', '>=40', '*'),
    ('86', '80-89', '>=40', '*'),
    ('87', '80-89', '>=40', '*'),
    ('88', '80-89', '>=40', '*'),
    ('89', '80-89', '>=40', '*'),
    ('90', '90-99', '>=40', '*'),
    ('91', '90-99', '>=40', '*'),
    ('92', '90-99', '>=40', '*'),
    ('93', '90-99', '>=40', '*'),
    ('94', '90-99', '>=40', '*'),
    ('95', '90-99', '>=40', '*'),
    ('96', '90-99', '>=40', '*'),
    ('97', '90-99', '>=40', '*'),
    ('98', '90-99', '>=40', '*'),
    ('99', '90-99', '>=40', '*')) AS "__SA_V"("__SA_LEAF", "__SA_L1", "__SA_L2", "__SA_L3")
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
    "A0"."__SA_ENTROPY_ATTRIBUTE_DISEASE",
    "A0"."__SA_EQUALDISTANCE_ATTRIBUTE_DISEASE"
  FROM "__SA_CLASSES" AS "C"
  LEFT JOIN (
    SELECT
      "AGE",
      "ZIP",
      "SEX",
      -SUM(
        CAST("__SA_C" AS DOUBLE) / "__SA_SIZE" * LN(CAST("__SA_C" AS DOUBLE) / "__SA_SIZE")
      ) AS "__SA_ENTROPY_ATTRIBUTE_DISEASE",
      (
        1.0 + SUM(
          ABS(
            CAST("__SA_GC" AS DOUBLE) / "__SA_TOTAL" - CAST("__SA_C" AS DOUBLE) / "__SA_SIZE"
          ) - CAST("__SA_GC" AS DOUBLE) / "__SA_TOTAL"
        )
      ) / 2.0 AS "__SA_EQUALDISTANCE_ATTRIBUTE_DISEASE"
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
        "__SA_ENTROPY_ATTRIBUTE_DISEASE" >= 0.4054651081071644
      ), FALSE) AS "__SA_OK0",
      COALESCE((
        "__SA_EQUALDISTANCE_ATTRIBUTE_DISEASE" <= 0.500000000001
      ), FALSE) AS "__SA_OK1"
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
    ELSE DENSE_RANK() OVER (
      ORDER BY CASE
        WHEN "__SA_R"."NAME" IS NULL
        THEN NULL
        ELSE SHA2(CONCAT('golden-salt-4f9c2a7e', CAST("__SA_R"."NAME" AS VARCHAR)), 256)
      END
    )
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
    WHEN "__SA_K"."__SA_OUTLIER_ROWS" <= FLOOR(CAST(1.0 AS DOUBLE) * CAST("__SA_K"."__SA_ROWS" AS DOUBLE))
    THEN "__SA_K"."__SA_KEEP"
    ELSE CAST(CONCAT(
      'sqlanon: not anonymous: ',
      CAST("__SA_K"."__SA_OUTLIER_ROWS" AS VARCHAR),
      ' rows are in classes that fail the privacy models, more than the suppression limit 1 allows of ',
      CAST("__SA_K"."__SA_ROWS" AS VARCHAR),
      ' rows'
    ) AS INT) = 0
  END;
ALTER TABLE "__SA_STAGE_C9022680F888" SWAP WITH "PEOPLE";
DROP TABLE "__SA_STAGE_C9022680F888";
