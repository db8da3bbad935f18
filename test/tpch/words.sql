-- words.sql: TPC-H's word lists (its clause 4.2.3) as the temporary table
-- tpch_words, for the generators that include it (test/tpch/generate.sql,
-- and test/ssb/generate.sql: SSB takes its dimensions' words from TPC-H):
-- the 25 nations in key order with the keys of their regions, the 5 regions
-- in key order, the market segments, the 92 colours of part names, and the
-- syllables of part types (6 x 5 x 5) and containers (5 x 8).

CREATE TEMP TABLE tpch_words AS
SELECT ARRAY['ALGERIA', 'ARGENTINA', 'BRAZIL', 'CANADA', 'EGYPT', 'ETHIOPIA', 'FRANCE',
             'GERMANY', 'INDIA', 'INDONESIA', 'IRAN', 'IRAQ', 'JAPAN', 'JORDAN', 'KENYA',
             'MOROCCO', 'MOZAMBIQUE', 'PERU', 'CHINA', 'ROMANIA', 'SAUDI ARABIA', 'VIETNAM',
             'RUSSIA', 'UNITED KINGDOM', 'UNITED STATES'] AS nation,
       ARRAY[0, 1, 1, 1, 4, 0, 3, 3, 2, 2, 4, 4, 2, 4, 0, 0, 0, 1, 2, 3, 4, 2, 3, 3, 1] AS regionkey,
       ARRAY['AFRICA', 'AMERICA', 'ASIA', 'EUROPE', 'MIDDLE EAST'] AS region,
       ARRAY['AUTOMOBILE', 'BUILDING', 'FURNITURE', 'MACHINERY', 'HOUSEHOLD'] AS segment,
       string_to_array('almond antique aquamarine azure beige bisque black blanched blue blush '
           'brown burlywood burnished chartreuse chiffon chocolate coral cornflower cornsilk '
           'cream cyan dark deep dim dodger drab firebrick floral forest frosted gainsboro '
           'ghost goldenrod green grey honeydew hot indian ivory khaki lace lavender lawn '
           'lemon light lime linen magenta maroon medium metallic midnight mint misty '
           'moccasin navajo navy olive orange orchid pale papaya peach peru pink plum powder '
           'puff purple red rose rosy royal saddle salmon sandy seashell sienna sky slate '
           'smoke snow spring steel tan thistle tomato turquoise violet wheat white yellow',
           ' ') AS color,
       ARRAY['STANDARD', 'SMALL', 'MEDIUM', 'LARGE', 'ECONOMY', 'PROMO'] AS type1,
       ARRAY['ANODIZED', 'BURNISHED', 'PLATED', 'POLISHED', 'BRUSHED'] AS type2,
       ARRAY['TIN', 'NICKEL', 'BRASS', 'STEEL', 'COPPER'] AS type3,
       ARRAY['SM', 'LG', 'MED', 'JUMBO', 'WRAP'] AS container1,
       ARRAY['CASE', 'BOX', 'BAG', 'JAR', 'PKG', 'PACK', 'CAN', 'DRUM'] AS container2;
