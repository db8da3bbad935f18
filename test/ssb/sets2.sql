-- Grouping sets over the SSB schema (not one of the benchmark's queries): profit in every
-- combination of customer region, supplier region and manufacturer
SELECT c_region, s_region, p_mfgr, sum(lo_revenue - lo_supplycost) AS profit,
       GROUPING(c_region, s_region, p_mfgr) AS level
FROM lineorder, customer, supplier, part
WHERE lo_custkey = c_custkey
  AND lo_suppkey = s_suppkey
  AND lo_partkey = p_partkey
GROUP BY CUBE (c_region, s_region, p_mfgr)
ORDER BY level, c_region, s_region, p_mfgr;
