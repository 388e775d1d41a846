WITH "__sa_freq" AS (
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
    CASE CAST("__sa_src"."age" AS VARCHAR)
      WHEN '20'
      THEN '<40'
      WHEN '21'
      THEN '<40'
      WHEN '22'
      THEN '<40'
      WHEN '23'
      THEN '<40'
      WHEN '24'
      THEN '<40'
      WHEN '25'
      THEN '<40'
      WHEN '26'
      THEN '<40'
      WHEN '27'
      THEN '<40'
      WHEN '28'
      THEN '<40'
      WHEN '29'
      THEN '<40'
      WHEN '30'
      THEN '<40'
      WHEN '31'
      THEN '<40'
      WHEN '32'
      THEN '<40'
      WHEN '33'
      THEN '<40'
      WHEN '34'
      THEN '<40'
      WHEN '35'
      THEN '<40'
      WHEN '36'
      THEN '<40'
      WHEN '37'
      THEN '<40'
      WHEN '38'
      THEN '<40'
      WHEN '39'
      THEN '<40'
      WHEN '40'
      THEN '>=40'
      WHEN '41'
      THEN '>=40'
      WHEN '42'
      THEN '>=40'
      WHEN '43'
      THEN '>=40'
      WHEN '44'
      THEN '>=40'
      WHEN '45'
      THEN '>=40'
      WHEN '46'
      THEN '>=40'
      WHEN '47'
      THEN '>=40'
      WHEN '48'
      THEN '>=40'
      WHEN '49'
      THEN '>=40'
      WHEN '50'
      THEN '>=40'
      WHEN '51'
      THEN '>=40'
      WHEN '52'
      THEN '>=40'
      WHEN '53'
      THEN '>=40'
      WHEN '54'
      THEN '>=40'
      WHEN '55'
      THEN '>=40'
      WHEN '56'
      THEN '>=40'
      WHEN '57'
      THEN '>=40'
      WHEN '58'
      THEN '>=40'
      WHEN '59'
      THEN '>=40'
    END AS "age",
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
)
SELECT
  "__sa_r"."id" AS "id",
  "__sa_r"."age" AS "age",
  "__sa_r"."zip" AS "zip",
  "__sa_r"."sex" AS "sex",
  "__sa_r"."disease" AS "disease"
FROM (
  SELECT
    CASE CAST("__sa_src"."age" AS VARCHAR)
      WHEN '20'
      THEN '<40'
      WHEN '21'
      THEN '<40'
      WHEN '22'
      THEN '<40'
      WHEN '23'
      THEN '<40'
      WHEN '24'
      THEN '<40'
      WHEN '25'
      THEN '<40'
      WHEN '26'
      THEN '<40'
      WHEN '27'
      THEN '<40'
      WHEN '28'
      THEN '<40'
      WHEN '29'
      THEN '<40'
      WHEN '30'
      THEN '<40'
      WHEN '31'
      THEN '<40'
      WHEN '32'
      THEN '<40'
      WHEN '33'
      THEN '<40'
      WHEN '34'
      THEN '<40'
      WHEN '35'
      THEN '<40'
      WHEN '36'
      THEN '<40'
      WHEN '37'
      THEN '<40'
      WHEN '38'
      THEN '<40'
      WHEN '39'
      THEN '<40'
      WHEN '40'
      THEN '>=40'
      WHEN '41'
      THEN '>=40'
      WHEN '42'
      THEN '>=40'
      WHEN '43'
      THEN '>=40'
      WHEN '44'
      THEN '>=40'
      WHEN '45'
      THEN '>=40'
      WHEN '46'
      THEN '>=40'
      WHEN '47'
      THEN '>=40'
      WHEN '48'
      THEN '>=40'
      WHEN '49'
      THEN '>=40'
      WHEN '50'
      THEN '>=40'
      WHEN '51'
      THEN '>=40'
      WHEN '52'
      THEN '>=40'
      WHEN '53'
      THEN '>=40'
      WHEN '54'
      THEN '>=40'
      WHEN '55'
      THEN '>=40'
      WHEN '56'
      THEN '>=40'
      WHEN '57'
      THEN '>=40'
      WHEN '58'
      THEN '>=40'
      WHEN '59'
      THEN '>=40'
    END AS "age",
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
) AS "__sa_r"
INNER JOIN "__sa_verdict" AS "__sa_k"
  ON (
    HASH_RECORD(ROW("__sa_r"."age")) = HASH_RECORD(ROW("__sa_k"."age"))
    AND NOT (
      "__sa_r"."age" IS DISTINCT FROM "__sa_k"."age"
    )
  )
  AND (
    HASH_RECORD(ROW("__sa_r"."zip")) = HASH_RECORD(ROW("__sa_k"."zip"))
    AND NOT (
      "__sa_r"."zip" IS DISTINCT FROM "__sa_k"."zip"
    )
  )
  AND (
    HASH_RECORD(ROW("__sa_r"."sex")) = HASH_RECORD(ROW("__sa_k"."sex"))
    AND NOT (
      "__sa_r"."sex" IS DISTINCT FROM "__sa_k"."sex"
    )
  )
WHERE
  "__sa_k"."__sa_keep";
