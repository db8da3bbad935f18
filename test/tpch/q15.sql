-- TPC-H Q15 (top supplier): the suppliers with the largest revenue in
-- 1996's first quarter; the spec's view revenue0 written as a WITH query
-- (read twice: joined to supplier and for its maximum).
WITH revenue0 (supplier_no, total_revenue) AS (
    SELECT l_suppkey, sum(l_extendedprice * (1 - l_discount))
    FROM lineitem
    WHERE l_shipdate >= date '1996-01-01'
      AND l_shipdate < date '1996-01-01' + interval '3' month
    GROUP BY l_suppkey)
SELECT s_suppkey, s_name, s_address, s_phone, total_revenue
FROM supplier, revenue0
WHERE s_suppkey = supplier_no
  AND total_revenue = (SELECT max(total_revenue) FROM revenue0)
ORDER BY s_suppkey;
