-- Grouping sets over the SSB schema (not one of the benchmark's queries): revenue by year and
-- customer region, with each year's and the grand total
SELECT d_year, c_region, sum(lo_revenue) AS revenue, count(*) AS lineorders
FROM lineorder, ssb_date, customer
WHERE lo_orderdate = d_datekey
  AND lo_custkey = c_custkey
GROUP BY ROLLUP (d_year, c_region)
ORDER BY d_year, c_region;
