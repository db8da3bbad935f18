-- TPC-H Q11 (important stock identification): the parts whose stock value
-- at GERMANY's suppliers exceeds 0.0001 of the total (the spec's fraction
-- at scale factor 1; few or no parts pass it at larger ones); a GROUP BY
-- with a HAVING against an uncorrelated subquery of the same join.
SELECT ps_partkey, sum(ps_supplycost * ps_availqty) AS value
FROM partsupp, supplier, nation
WHERE ps_suppkey = s_suppkey
  AND s_nationkey = n_nationkey
  AND n_name = 'GERMANY'
GROUP BY ps_partkey
HAVING sum(ps_supplycost * ps_availqty) > (SELECT sum(ps_supplycost * ps_availqty) * 0.0001
                                           FROM partsupp, supplier, nation
                                           WHERE ps_suppkey = s_suppkey
                                             AND s_nationkey = n_nationkey
                                             AND n_name = 'GERMANY')
ORDER BY value DESC;
