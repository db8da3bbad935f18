-- keys.sql: the primary keys of the Star Schema Benchmark's dimension tables
-- (test/ssb/schema.sql), added after the load; run with search_path set to
-- their schema.

ALTER TABLE ssb_date ADD PRIMARY KEY (d_datekey);
ALTER TABLE customer ADD PRIMARY KEY (c_custkey);
ALTER TABLE supplier ADD PRIMARY KEY (s_suppkey);
ALTER TABLE part ADD PRIMARY KEY (p_partkey);
