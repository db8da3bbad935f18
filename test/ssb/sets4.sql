-- Grouping sets over the SSB schema (not one of the benchmark's queries): profit margin by
-- supplier region and nation, ranked within each level of the rollup by a window function
SELECT s_region, s_nation, sum(lo_revenue - lo_supplycost) AS profit,
       GROUPING(s_region) + GROUPING(s_nation) AS level,
       rank() OVER (PARTITION BY GROUPING(s_region) + GROUPING(s_nation),
                    CASE WHEN GROUPING(s_nation) = 0 THEN s_region END
                    ORDER BY sum(lo_revenue - lo_supplycost) DESC) AS rank_in_level
FROM lineorder, supplier, ssb_date
WHERE lo_suppkey = s_suppkey
  AND lo_orderdate = d_datekey
  AND d_year = 1997
GROUP BY ROLLUP (s_region, s_nation)
ORDER BY level DESC, s_region, rank_in_level;
