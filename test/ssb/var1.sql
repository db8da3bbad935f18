-- Standard deviations over the SSB schema (not one of the benchmark's queries): how revenue and
-- quantity vary by year and customer region
SELECT d_year, c_region, stddev(lo_revenue) AS revenue_sd, var_pop(lo_quantity) AS quantity_var,
       avg(lo_discount) AS discount
FROM lineorder, ssb_date, customer
WHERE lo_orderdate = d_datekey
  AND lo_custkey = c_custkey
GROUP BY d_year, c_region
ORDER BY d_year, c_region;
