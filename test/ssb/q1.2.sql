-- SSB Q1.2: Q1.1 for January 1994, discounts 4 to 6, quantities 26 to 35
SELECT sum(lo_extendedprice * lo_discount) AS revenue
FROM lineorder, ssb_date
WHERE lo_orderdate = d_datekey
  AND d_yearmonthnum = 199401
  AND lo_discount BETWEEN 4 AND 6
  AND lo_quantity BETWEEN 26 AND 35;
