-- TPC-H Q3 (shipping priority): the 10 unshipped orders of the BUILDING
-- segment with the highest revenue on 1995-03-15; customer, orders and
-- lineitem joined, grouped by order.  l_orderkey ends the ORDER BY so that
-- ties at the LIMIT cannot make two correct plans return different rows.
SELECT l_orderkey, sum(l_extendedprice * (1 - l_discount)) AS revenue, o_orderdate,
       o_shippriority
FROM customer, orders, lineitem
WHERE c_mktsegment = 'BUILDING'
  AND c_custkey = o_custkey
  AND l_orderkey = o_orderkey
  AND o_orderdate < date '1995-03-15'
  AND l_shipdate > date '1995-03-15'
GROUP BY l_orderkey, o_orderdate, o_shippriority
ORDER BY revenue DESC, o_orderdate, l_orderkey
LIMIT 10;
