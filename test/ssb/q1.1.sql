-- SSB Q1.1: revenue gained by eliminating small discounts on small orders in 1993
SELECT sum(lo_extendedprice * lo_discount) AS revenue
FROM lineorder, ssb_date
WHERE lo_orderdate = d_datekey
  AND d_year = 1993
  AND lo_discount BETWEEN 1 AND 3
  AND lo_quantity < 25;
