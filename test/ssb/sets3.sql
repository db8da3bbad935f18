-- Grouping sets over the SSB schema (not one of the benchmark's queries): discounted quantity
-- by ship mode, by year and in all, for small discounts
SELECT lo_shipmode, d_year, sum(lo_quantity) AS quantity, avg(lo_discount) AS discount,
       max(lo_extendedprice) AS largest
FROM lineorder, ssb_date
WHERE lo_orderdate = d_datekey
  AND lo_discount BETWEEN 1 AND 3
GROUP BY GROUPING SETS ((lo_shipmode), (d_year), ())
ORDER BY lo_shipmode, d_year;
