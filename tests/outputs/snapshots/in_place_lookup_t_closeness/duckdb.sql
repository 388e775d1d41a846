BEGIN;
CREATE TABLE "__sa_stage_c9022680f888" AS
WITH "__sa_lookup0" AS (
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
    ('99', '90-99', '>=40', '*')) AS __sa_v(__sa_leaf, __sa_l1, __sa_l2, __sa_l3)
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
    CASE CAST("__sa_src"."zip" AS TEXT)
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
    ON "__sa_h0"."__sa_leaf" = CAST("__sa_src"."age" AS TEXT)
), "__sa_hist0" AS (
  SELECT
    *,
    MAX("__sa_vr") OVER () AS "__sa_dom"
  FROM (
    SELECT
      *,
      SUM("__sa_c") OVER (PARTITION BY "age", "zip", "sex") AS "__sa_size",
      SUM("__sa_c") OVER (PARTITION BY "__sa_v") AS "__sa_gc",
      SUM("__sa_c") OVER () AS "__sa_total",
      ROW_NUMBER() OVER (PARTITION BY "age", "zip", "sex" ORDER BY "__sa_c" DESC, "__sa_v") AS "__sa_rk",
      DENSE_RANK() OVER (ORDER BY "__sa_v") AS "__sa_vr"
    FROM (
      SELECT
        "age",
        "zip",
        "sex",
        "disease" AS "__sa_v",
        SUM("__sa_n") AS "__sa_c"
      FROM "__sa_gen"
      GROUP BY
        "age",
        "zip",
        "sex",
        "disease"
    ) AS __sa_h0
  ) AS __sa_h1
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
    "c"."__sa_size",
    "a0"."__sa_entropy_attribute_disease",
    "a0"."__sa_equaldistance_attribute_disease"
  FROM "__sa_classes" AS "c"
  LEFT JOIN (
    SELECT
      "age",
      "zip",
      "sex",
      -SUM(
        CAST("__sa_c" AS DOUBLE) / "__sa_size" * LN(CAST("__sa_c" AS DOUBLE) / "__sa_size")
      ) AS "__sa_entropy_attribute_disease",
      (
        1.0 + SUM(
          ABS(
            CAST("__sa_gc" AS DOUBLE) / "__sa_total" - CAST("__sa_c" AS DOUBLE) / "__sa_size"
          ) - CAST("__sa_gc" AS DOUBLE) / "__sa_total"
        )
      ) / 2.0 AS "__sa_equaldistance_attribute_disease"
    FROM "__sa_hist0"
    GROUP BY
      "age",
      "zip",
      "sex"
  ) AS "a0"
    ON "c"."age" IS NOT DISTINCT FROM "a0"."age"
    AND "c"."zip" IS NOT DISTINCT FROM "a0"."zip"
    AND "c"."sex" IS NOT DISTINCT FROM "a0"."sex"
), "__sa_verdict" AS (
  SELECT
    *,
    "__sa_ok0" AND "__sa_ok1" AS "__sa_keep"
  FROM (
    SELECT
      *,
      COALESCE((
        "__sa_entropy_attribute_disease" >= 0.4054651081071644
      ), FALSE) AS "__sa_ok0",
      COALESCE((
        "__sa_equaldistance_attribute_disease" <= 0.500000000001
      ), FALSE) AS "__sa_ok1"
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
    ELSE DENSE_RANK() OVER (
      ORDER BY CASE
        WHEN "__sa_r"."name" IS NULL
        THEN NULL
        ELSE SHA256('golden-salt-4f9c2a7e' || CAST("__sa_r"."name" AS TEXT))
      END
    )
  END AS "name",
  "__sa_r"."age" AS "age",
  "__sa_r"."zip" AS "zip",
  "__sa_r"."sex" AS "sex",
  "__sa_r"."disease" AS "disease"
FROM (
  SELECT
    "__sa_h0"."__sa_l2" AS "age",
    CASE CAST("__sa_src"."zip" AS TEXT)
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
    ON "__sa_h0"."__sa_leaf" = CAST("__sa_src"."age" AS TEXT)
) AS "__sa_r"
INNER JOIN "__sa_totals" AS "__sa_k"
  ON "__sa_r"."age" IS NOT DISTINCT FROM "__sa_k"."age"
  AND "__sa_r"."zip" IS NOT DISTINCT FROM "__sa_k"."zip"
  AND "__sa_r"."sex" IS NOT DISTINCT FROM "__sa_k"."sex"
WHERE
  CASE
    WHEN "__sa_k"."__sa_outlier_rows" <= FLOOR(CAST(1.0 AS DOUBLE) * CAST("__sa_k"."__sa_rows" AS DOUBLE))
    THEN "__sa_k"."__sa_keep"
    ELSE CAST('sqlanon: not anonymous: ' || CAST("__sa_k"."__sa_outlier_rows" AS TEXT) || ' rows are in classes that fail the privacy models, more than the suppression limit 1 allows of ' || CAST("__sa_k"."__sa_rows" AS TEXT) || ' rows' AS INT) = 0
  END;
DROP TABLE "people";
ALTER TABLE "__sa_stage_c9022680f888" RENAME TO "people";
COMMIT;
