-- TPC-H Q17 (small-quantity-order revenue): the yearly revenue lost if the
-- orders of Brand#23 MED BOX parts below 20% of the part's average quantity
-- were not taken.  The spec's correlated subquery (the part's average) is
-- written as a join with lineitem grouped by part, the same rows:
-- PostgreSQL does not decorrelate it, and without an index on l_partkey it
-- would scan lineitem once per outer row.
SELECT sum(l_extendedprice) / 7.0 AS avg_yearly
FROM lineitem, part,
     (SELECT l_partkey AS agg_partkey, 0.2 * avg(l_quantity) AS avg_quantity
      FROM lineitem
      GROUP BY l_partkey) AS part_agg
WHERE p_partkey = l_partkey
  AND agg_partkey = l_partkey
  AND p_brand = 'Brand#23'
  AND p_container = 'MED BOX'
  AND l_quantity < avg_quantity;
