-- TPC-H Q20 (potential part promotion): CANADA's suppliers holding more
-- than half of what they shipped in 1994 of a 'forest%' part.  The spec's
-- correlated subquery (the part and supplier's 1994 quantity) is written as
-- a join with lineitem grouped by part and supplier, the same rows:
-- PostgreSQL does not decorrelate it, and without an index on lineitem it
-- would scan lineitem once per partsupp row.
SELECT s_name, s_address
FROM supplier, nation
WHERE s_suppkey IN (SELECT ps_suppkey
                    FROM partsupp,
                         (SELECT l_partkey AS agg_partkey, l_suppkey AS agg_suppkey,
                                 0.5 * sum(l_quantity) AS agg_quantity
                          FROM lineitem
                          WHERE l_shipdate >= date '1994-01-01'
                            AND l_shipdate < date '1994-01-01' + interval '1' year
                          GROUP BY l_partkey, l_suppkey) AS agg_lineitem
                    WHERE agg_partkey = ps_partkey
                      AND agg_suppkey = ps_suppkey
                      AND ps_partkey IN (SELECT p_partkey FROM part WHERE p_name LIKE 'forest%')
                      AND ps_availqty > agg_quantity)
  AND s_nationkey = n_nationkey
  AND n_name = 'CANADA'
ORDER BY s_name;
