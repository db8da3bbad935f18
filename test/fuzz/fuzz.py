#!/usr/bin/env python3
"""fuzz.py: differential fuzzing of gpuhash.  Random star and snowflake
queries (inner, outer, semi and anti joins of a fact table with dimensions,
snowflakes, quals of every kind the device evaluates and some it does not,
GROUP BY, grouping sets, DISTINCT, HAVING, ORDER BY ... LIMIT, every
aggregate) over the tables of schema.sql (NULLs, duplicate and missing keys,
an empty dimension, dead and updated rows, a partitioned copy, short tuples
from ALTER TABLE ADD COLUMN), run with gpuhash off (the reference, serial)
and forced on (serial or parallel, sometimes with other settings); the rows
are compared by the md5 of their sorted text, errors by SQLSTATE.  An error
that only one side raises passes where PostgreSQL itself, planned
otherwise, gives gpuhash's outcome (an empty join may skip evaluating the
other side's quals).  Only the Python standard library and psql are used.

usage: fuzz.py [--seed N] [--count N] [--minutes M] [--tap] [--log FILE]
               [--ssb SCHEMA] [--tpch SCHEMA] [--device cpu|gpu]
       fuzz.py --show SEED           (print the query of one seed)

The server and database are psql's (PGHOST, PGPORT, PGUSER, PGDATABASE);
schema fz must have been loaded from schema.sql; --ssb and --tpch add the
queries over those workloads' schemas (test/workload.sh).  --tap prints a
TAP line a query and a closing "N passed, N failed", and exits 1 on a
failure: a different result, an error only one side raises, a crash.
"""
import argparse, os, random, re, subprocess, sys, time, json

# ---------------------------------------------------------------- schema model
# column: (name, kind) kinds: i2 i4 i8 num fl date ts text bool ; 'nn' suffix-free
class T:
    def __init__(self, name, cols, alias):
        self.name, self.alias = name, alias
        self.cols = cols  # list of (col, kind, nullable)

def cols(spec):
    out = []
    for s in spec.split():
        c, k = s.split(':')
        nullable = True
        if k.endswith('!'):
            k = k[:-1]; nullable = False
        out.append((c, k, nullable))
    return out

FZ = {
    'f': cols('id:i8 k1:i4 k2:i2 k3:i8 kd:date kt:ts i2:i2 i4:i4 i8:i8 n:num nu:numu fl:fl t:text b:bool d:date ktz:tz'),
    'dz': cols('z:tz! zl:text zh:i4'),
    'dtx': cols('s:text! code:i4 grp:text'),
    'd6': cols('a:i4! b:i2! label:text v:i8'),
    'dn': cols('n:num! nl:text'),
    'd1': cols('k:i4! name:text grp:i4 w:num dt:date flag:bool cat:text g5:i4 i8:i8'),
    'd2': cols('k:i2 label:text v:i4 m:num ts:ts'),
    'd3': cols('k:i8 s:text v:i4 n:num'),
    'd4': cols('k:i4! s:text v:i4'),
    'dd': cols('d:date! yr:i4 mon:i4 q:text wk:i4 hol:bool'),
    'd5': cols('g:i4! gname:text gv:i8'),
    'dt': cols('t:ts! hr:i4 label:text'),
    'fs': cols('id:i4 k1:i4 k2:i2 v:i4 n:num'),
}
# joins of the fact table: (dim, fact col, dim col)
FZ_JOINS = {
    'f': [('d1', 'k1', 'k'), ('d2', 'k2', 'k'), ('d3', 'k3', 'k'), ('d4', 'k1', 'k'),
          ('dd', 'kd', 'd'), ('dd', 'd', 'd'), ('dt', 'kt', 't'), ('d1', 'k2', 'k'),
          ('d1', 'k3', 'k'), ('d2', 'k1', 'k'), ('dz', 'ktz', 'z'), ('d1', 'k1', 'k'), ('dd', 'kd', 'd'),
          ('dtx', 't', 's'), ('d6', ('k1', 'k2'), ('a', 'b')), ('dn', 'n', 'n'), ('d6', ('k1', 'k2'), ('a', 'b'))],
    'fs': [('d1', 'k1', 'k'), ('d2', 'k2', 'k'), ('d3', 'k1', 'k'), ('d4', 'k1', 'k')],
}
# snowflake: dim -> (subdim, dim col, subdim col)
FZ_SNOW = {'d1': [('d5', 'g5', 'g'), ('dd', 'dt', 'd')], 'd2': [('dt', 'ts', 't')]}

# primary keys (one column), of every world's tables: a GROUP BY of a key and
# other columns of its table (PostgreSQL drops those; a star carries them)
PKS = {'d1': 'k', 'd4': 'k', 'dd': 'd', 'd5': 'g', 'dt': 't', 'dz': 'z',
       'ssb_date': 'd_datekey', 'customer': 'c_custkey', 'supplier': 's_suppkey', 'part': 'p_partkey',
       'region': 'r_regionkey', 'nation': 'n_nationkey', 'orders': 'o_orderkey'}

SSB = {
    'lineorder': cols('lo_orderkey:i4! lo_linenumber:i4! lo_custkey:i4! lo_partkey:i4! lo_suppkey:i4! '
                      'lo_orderdate:i4! lo_orderpriority:text! lo_quantity:i4! lo_extendedprice:i4! '
                      'lo_ordtotalprice:i4! lo_discount:i4! lo_revenue:i4! lo_supplycost:i4! lo_tax:i4! '
                      'lo_commitdate:i4! lo_shipmode:text!'),
    'ssb_date': cols('d_datekey:i4! d_dayofweek:text! d_month:text! d_year:i4! d_yearmonthnum:i4! '
                     'd_yearmonth:text! d_daynuminweek:i4! d_monthnuminyear:i4! d_weeknuminyear:i4! '
                     'd_sellingseason:text! d_holidayfl:i4!'),
    'customer': cols('c_custkey:i4! c_city:text! c_nation:text! c_region:text! c_mktsegment:text!'),
    'supplier': cols('s_suppkey:i4! s_city:text! s_nation:text! s_region:text!'),
    'part': cols('p_partkey:i4! p_mfgr:text! p_category:text! p_brand1:text! p_color:text! p_size:i4! p_container:text!'),
}
SSB_JOINS = {'lineorder': [('ssb_date', 'lo_orderdate', 'd_datekey'), ('customer', 'lo_custkey', 'c_custkey'),
                           ('supplier', 'lo_suppkey', 's_suppkey'), ('part', 'lo_partkey', 'p_partkey'),
                           ('ssb_date', 'lo_commitdate', 'd_datekey')]}

TPCH = {
    'lineitem': cols('l_orderkey:i4! l_partkey:i4! l_suppkey:i4! l_linenumber:i4! l_quantity:num! '
                     'l_extendedprice:num! l_discount:num! l_tax:num! l_returnflag:text! l_linestatus:text! '
                     'l_shipdate:date! l_commitdate:date! l_receiptdate:date! l_shipmode:text!'),
    'orders': cols('o_orderkey:i4! o_custkey:i4! o_orderstatus:text! o_totalprice:num! o_orderdate:date! '
                   'o_orderpriority:text! o_shippriority:i4!'),
    'customer': cols('c_custkey:i4! c_nationkey:i4! c_acctbal:num! c_mktsegment:text!'),
    'part': cols('p_partkey:i4! p_brand:text! p_type:text! p_size:i4! p_container:text! p_retailprice:num!'),
    'supplier': cols('s_suppkey:i4! s_nationkey:i4! s_acctbal:num!'),
    'nation': cols('n_nationkey:i4! n_name:text! n_regionkey:i4!'),
    'region': cols('r_regionkey:i4! r_name:text!'),
    'partsupp': cols('ps_partkey:i4! ps_suppkey:i4! ps_availqty:i4! ps_supplycost:num!'),
}
TPCH_JOINS = {'lineitem': [('orders', 'l_orderkey', 'o_orderkey'), ('part', 'l_partkey', 'p_partkey'),
                           ('supplier', 'l_suppkey', 's_suppkey')],
              'orders': [('customer', 'o_custkey', 'c_custkey')]}
TPCH_SNOW = {'orders': [('customer', 'o_custkey', 'c_custkey')], 'customer': [('nation', 'c_nationkey', 'n_nationkey')],
             'supplier': [('nation', 's_nationkey', 'n_nationkey')], 'nation': [('region', 'n_regionkey', 'r_regionkey')]}

TEXT_LITS = {
    'f.t': ["'alpha'", "'beta'", "'gamma'", "''", "'x y'", "'zzz'"],
    'name': ["'name1'", "'name0'", "'name36'", "'nameX'"],
    'cat': ["'red'", "'Red '", "'gr%en'", "'blue'"],
    'label': ["'L1'", "'L3'", "'h5'", "'h13'"],
    's': ["'s0'", "'s1'", "'s3'"],
    'q': ["'Q1'", "'Q3'"],
    'gname': ["'G1'", "'G4'"],
    'c_region': ["'AMERICA'", "'ASIA'", "'EUROPE'"],
    's_region': ["'AMERICA'", "'ASIA'", "'AFRICA'"],
    'c_nation': ["'UNITED STATES'", "'CHINA'", "'BRAZIL'"],
    's_nation': ["'UNITED STATES'", "'CHINA'", "'JAPAN'"],
    'p_category': ["'MFGR#12'", "'MFGR#14'", "'MFGR#23'"],
    'p_mfgr': ["'MFGR#1'", "'MFGR#2'"],
    'p_brand1': ["'MFGR#1221'", "'MFGR#2239'"],
    'd_yearmonth': ["'Dec1997'", "'Jan1994'"],
    'd_sellingseason': ["'Winter'", "'Summer'"],
    'lo_shipmode': ["'AIR'", "'RAIL'", "'MAIL'"],
    'l_shipmode': ["'AIR'", "'RAIL'", "'MAIL'"],
    'l_returnflag': ["'R'", "'A'", "'N'"],
    'l_linestatus': ["'O'", "'F'"],
    'o_orderstatus': ["'F'", "'O'", "'P'"],
    'c_mktsegment': ["'BUILDING'", "'AUTOMOBILE'", "'MACHINERY'"],
    'n_name': ["'FRANCE'", "'GERMANY'", "'CHINA'"],
    'r_name': ["'ASIA'", "'EUROPE'"],
    'p_brand': ["'Brand#23'", "'Brand#12'"],
    'p_container': ["'MED BOX'", "'SM CASE'"],
    'o_orderpriority': ["'1-URGENT'", "'2-HIGH'"],
    'lo_orderpriority': ["'1-URGENT'", "'5-LOW'"],
}
LIKE_PATS = ["'%a%'", "'a%'", "'%1'", "'%e_'", "'MFGR#1%'", "'PROMO%'", "'%BRASS'", "'L%'", "'%'", "'gr\\%%'", "'%BOX'"]

INT_RANGES = {
    # fact/dim col -> typical range for literals
    'i2': (-32768, 32767), 'i4': (-100000, 100000), 'i8': (-2000000000000, 2000000000000),
    'k1': (1, 1030), 'k2': (-100, 420), 'k3': (0, 260), 'id': (1, 200000), 'grp': (0, 9), 'g5': (0, 6),
    'v': (-100, 900), 'yr': (2019, 2022), 'mon': (1, 12), 'wk': (1, 53), 'hr': (0, 23), 'gv': (0, 500),
    'd_year': (1992, 1998), 'd_yearmonthnum': (199201, 199812), 'lo_quantity': (1, 50), 'lo_discount': (0, 10),
    'lo_tax': (0, 8), 'p_size': (1, 50), 'd_weeknuminyear': (1, 53), 'lo_orderdate': (19920101, 19981231),
    'd_monthnuminyear': (1, 12), 'lo_revenue': (0, 10000000), 'lo_extendedprice': (0, 10000000),
    'lo_supplycost': (0, 100000), 'c_nationkey': (0, 24), 's_nationkey': (0, 24), 'n_regionkey': (0, 4),
    'ps_availqty': (1, 9999), 'o_shippriority': (0, 1), 'l_linenumber': (1, 7), 'lo_linenumber': (1, 7),
    'd_daynuminweek': (1, 7), 'd_holidayfl': (0, 1),
}


FZ['fv'] = FZ['f']
FZ['fp'] = FZ['f']
FZ_JOINS['fv'] = FZ_JOINS['f']
FZ_JOINS['fp'] = FZ_JOINS['f']
TZS = ['UTC', 'UTC', 'America/New_York', 'Asia/Kolkata', 'Europe/Berlin', '<+0530>-05:30', 'Australia/Lord_Howe', 'Pacific/Chatham']


class Gen:
    def __init__(self, rng):
        self.r = rng

    def ch(self, xs):
        return self.r.choice(xs)

    def p(self, prob):
        return self.r.random() < prob

    # ------------------------------------------------------------ build FROM
    def build(self):
        r = self.r
        self.star = self.p(0.6)
        self.tz = self.ch(TZS)
        w = r.random()
        if (w >= 0.70 and w < 0.87 and not SCHEMAS['ssb']) or (w >= 0.87 and not SCHEMAS['tpch']):
            w = w % 0.70       # that workload is not loaded: fz's tables
        if w < 0.62:
            self.world = 'fz'; self.tabs = FZ; fact = self.ch(['f'] * 6 + ['fv', 'fv', 'fp', 'fp']); joins = FZ_JOINS; snow = FZ_SNOW
            self.schema = 'fz'
        elif w < 0.70:
            self.world = 'fz'; self.tabs = FZ; fact = 'fs'; joins = FZ_JOINS; snow = FZ_SNOW
            self.schema = 'fz'
        elif w < 0.87:
            self.world = 'ssb'; self.tabs = SSB; fact = 'lineorder'; joins = SSB_JOINS; snow = {}
            self.schema = SCHEMAS['ssb']
        else:
            self.world = 'tpch'; self.tabs = TPCH; fact = r.choice(['lineitem', 'lineitem', 'orders']); joins = TPCH_JOINS
            snow = TPCH_SNOW
            self.schema = SCHEMAS['tpch']
        self.fact = fact
        self.rels = [(fact, 'f')]   # (table, alias)
        self.from_sql = '%s f' % fact
        self.nullable_aliases = set()
        self.extra_where = []
        ndims = self.ch([0, 1, 1, 1, 2, 2, 2, 3, 3, 4] + ([2, 3, 3, 4, 4] if self.star else []))
        cands = list(joins.get(fact, []))
        if self.star and self.p(0.85):
            cands = [c for c in cands if c[0] not in ('d3',)]
        if self.p(0.7):
            cands = [c for c in cands if c[0] not in ('d4',)]
        r.shuffle(cands)
        used = 0
        ai = 0
        for (dim, fc, dc) in cands:
            if used >= ndims:
                break
            ai += 1
            a = 'd%d' % ai if self.world != 'fz' else 'x%d' % ai
            jt = 'JOIN'
            if self.p(0.18):
                jt = 'LEFT JOIN'
            elif self.p(0.03):
                jt = self.ch(['RIGHT JOIN', 'FULL JOIN'])
            if isinstance(fc, tuple):
                cond = ' AND '.join('f.%s = %s.%s' % (x, a, y) for x, y in zip(fc, dc))
            else:
                cond = 'f.%s = %s.%s' % (fc, a, dc)
            if self.p(0.05):
                cond += ' AND %s' % self.pred_rel(a, dim, 1)
            self.from_sql += ' %s %s %s ON %s' % (jt, dim, a, cond)
            self.rels.append((dim, a))
            if jt in ('LEFT JOIN', 'FULL JOIN'):
                self.nullable_aliases.add(a)
                if jt == 'LEFT JOIN' and self.p(0.3):
                    kc = dc[0] if isinstance(dc, tuple) else dc
                    self.extra_where.append('%s.%s IS %sNULL' % (a, kc, self.ch(['', '', 'NOT '])))
            if jt in ('RIGHT JOIN', 'FULL JOIN'):
                self.nullable_aliases.add('f')
            used += 1
            # snowflake
            if dim in snow and self.p(0.3):
                sd, c1, c2 = self.ch(snow[dim])
                ai += 1
                b = 'x%d' % ai if self.world == 'fz' else 'd%d' % ai
                jt2 = 'LEFT JOIN' if self.p(0.2) else 'JOIN'
                self.from_sql += ' %s %s %s ON %s.%s = %s.%s' % (jt2, sd, b, a, c1, b, c2)
                self.rels.append((sd, b))
                if jt2 == 'LEFT JOIN' or a in self.nullable_aliases:
                    self.nullable_aliases.add(b)

    # ------------------------------------------------------------ columns
    def colsof(self, alias, kinds=None):
        for (t, a) in self.rels:
            if a == alias:
                return [(a, c, k, n) for (c, k, n) in self.tabs[t] if kinds is None or k in kinds]
        return []

    def allcols(self, kinds=None, aliases=None):
        out = []
        for (t, a) in self.rels:
            if aliases is not None and a not in aliases:
                continue
            out += [(a, c, k, n) for (c, k, n) in self.tabs[t] if kinds is None or k in kinds]
        return out

    def col(self, kinds, aliases=None):
        cs = self.allcols(kinds, aliases)
        if not cs:
            return None
        # prefer fact columns somewhat
        if self.p(0.85):
            cs2 = [c for c in cs if c[2] != 'numu']
            if cs2:
                cs = cs2
        fcs = [c for c in cs if c[0] == 'f']
        if fcs and self.p(0.5):
            cs = fcs
        a, c, k, n = self.ch(cs)
        return '%s.%s' % (a, c), k, c

    # ------------------------------------------------------------ expressions
    def int_lit(self, cname=None, kind='i4'):
        lo, hi = INT_RANGES.get(cname, INT_RANGES.get(kind, (-100, 100)))
        if self.p(0.1):
            return str(self.ch([0, 1, -1, 2, 7, 100]))
        v = self.r.randint(lo, hi)
        return str(v) if v >= 0 else '(%d)' % v

    def num_lit(self):
        return self.ch(['1.5', '0.01', '2.25', '100.00', '(-3.5)', '0.5', '12345.67', '1', '0.333'])

    def date_lit(self):
        if self.world == 'fz':
            y = self.r.randint(2019, 2022)
        else:
            y = self.r.randint(1992, 1998)
        return "date '%d-%02d-%02d'" % (y, self.r.randint(1, 12), self.r.randint(1, 28))

    def ts_lit(self):
        return "timestamp '2021-%02d-%02d %02d:%02d:00'" % (self.r.randint(1, 4), self.r.randint(1, 28),
                                                          self.r.randint(0, 23), self.ch([0, 30]))

    def expr(self, kind, depth=0, aliases=None):
        """an expression of kind int/num/fl/date/ts/text; returns (sql, exactkind)."""
        r = self.r
        if kind == 'int':
            if depth > 2 or self.p(0.45):
                c = self.col(['i2', 'i4', 'i8'], aliases)
                if c is None:
                    return self.int_lit(), 'i4'
                return c[0], c[1]
            op = r.random()
            a, ka = self.expr('int', depth + 1, aliases)
            if op < 0.15:
                b, kb = self.expr('int', depth + 1, aliases)
                return '(%s + %s)' % (a, b), 'i8'
            if op < 0.25:
                return '(%s - %s)' % (a, self.int_lit()), ka
            if op < 0.33:
                return '(%s * %s)' % (a, self.ch(['2', '3', '-1', '1000', '100000'])), ka
            if op < 0.40:
                d = self.ch(['7', '3', '0', '-2', '100'])
                if self.p(0.4):
                    d, _ = self.expr('int', depth + 1, aliases)
                return '(%s / %s)' % (a, d), ka
            if op < 0.47:
                d = self.ch(['7', '3', '10', '2'])
                if self.p(0.3):
                    d, _ = self.expr('int', depth + 1, aliases)
                return '(%s %% %s)' % (a, d), ka
            if op < 0.52:
                return 'abs(%s)' % a, ka
            if op < 0.62:
                b, _ = self.expr('int', depth + 1, aliases)
                return 'CASE WHEN %s THEN %s ELSE %s END' % (self.pred(depth + 1, aliases), a, b), 'i8'
            if op < 0.70:
                return 'COALESCE(%s, %s)' % (a, self.int_lit()), ka
            if op < 0.74:
                return 'NULLIF(%s, %s)' % (a, self.int_lit()), ka
            if op < 0.80:
                b, _ = self.expr('int', depth + 1, aliases)
                return '%s(%s, %s)' % (self.ch(['GREATEST', 'LEAST']), a, b), 'i8'
            if op < 0.88:
                d = self.col(['date', 'ts', 'tz'], aliases)
                if d:
                    fld = self.ch(['year', 'month', 'day', 'dow', 'quarter', 'doy', 'week'] +
                                  (['hour', 'minute', 'hour'] if d[1] in ('ts', 'tz') else []))
                    if self.star:
                        return 'EXTRACT(%s FROM %s)' % (fld, d[0]), 'i4'
                    if self.p(0.5):
                        return 'EXTRACT(%s FROM %s)::int' % (fld, d[0]), 'i4'
                    return 'date_part(%s, %s)::int8' % ("'%s'" % fld, d[0]), 'i8'
            if op < 0.93:
                d = self.col(['date'], aliases)
                if d:
                    return '(%s - %s)' % (d[0], self.date_lit()), 'i4'
            if op < 0.945:
                return '%s::int8' % a, 'i8'
            if op < 0.96:
                w = r.random()
                if w < 0.4:
                    return 'mod(%s, %s)' % (a, self.ch(['7', '3', '-4', '0'])), ka
                if w < 0.7:
                    n, _ = self.expr('num', depth + 1, aliases)
                    return '%s::int4' % n, 'i4'
                f, _ = self.expr('fl', depth + 1, aliases)
                return '%s(%s)::int8' % (self.ch(['floor', 'ceil', 'round', 'trunc']), f), 'i8'
            if op < 0.97:
                return '%s::int2' % a, 'i2'
            if op < 0.985:
                c = self.col(['text'], aliases)
                if c:
                    return '%s(%s)' % (self.ch(['length', 'char_length', 'octet_length']), c[0]), 'i4'
            return '(%s + %s)::int4' % (a, self.int_lit()), 'i4'
        if kind == 'num':
            if depth > 2 or self.p(0.4):
                c = self.col(['num', 'numu'], aliases)
                if c is None or self.p(0.15):
                    i, _ = self.expr('int', depth + 1, aliases)
                    if self.star:
                        return self.ch(['%s::numeric' % i, '(%s * %s)' % (i, self.num_lit())]), 'num'
                    return '%s::numeric(15,2)' % i if self.p(0.5) else '(%s * %s)' % (i, self.num_lit()), 'num'
                return c[0], c[1]
            a, _ = self.expr('num', depth + 1, aliases)
            op = r.random()
            if self.star:
                while 0.55 <= op < 0.60 or 0.90 <= op < 0.95:
                    op = r.random()
            if op < 0.2:
                b, _ = self.expr('num', depth + 1, aliases)
                return '(%s + %s)' % (a, b), 'num'
            if op < 0.35:
                b, _ = self.expr('num', depth + 1, aliases)
                return '(%s - %s)' % (a, b), 'num'
            if op < 0.55:
                return '(%s * %s)' % (a, self.ch([self.num_lit(), self.expr('int', depth + 1, aliases)[0],
                                                  self.expr('num', depth + 1, aliases)[0]])), 'num'
            if op < 0.60:
                return '(%s / %s)' % (a, self.ch(['3', '2.5', '0', self.expr('int', depth + 1, aliases)[0]])), 'num'
            if op < 0.68:
                return 'COALESCE(%s, %s)' % (a, self.num_lit()), 'num'
            if op < 0.75:
                return 'CASE WHEN %s THEN %s ELSE %s END' % (self.pred(depth + 1, aliases), a,
                                                            self.ch([self.num_lit(), 'NULL', '0'])), 'num'
            if op < 0.80:
                if self.p(0.5):
                    return '%s(%s, %d)' % (self.ch(['round', 'trunc']), a, self.ch([0, 1, 2, -1])), 'num'
                return '%s(%s)' % (self.ch(['round', 'trunc', 'floor', 'ceil']), a), 'num'
            if op < 0.85:
                return 'abs(%s)' % a, 'num'
            if op < 0.90:
                return '%s(%s, %s)' % (self.ch(['GREATEST', 'LEAST']), a, self.num_lit()), 'num'
            if op < 0.95:
                return '%s::numeric(12,1)' % a, 'num'
            return '(- %s)' % a, 'num'
        if kind == 'fl':
            c = self.col(['fl'], aliases)
            if c is None:
                i, _ = self.expr('int', depth + 1, aliases)
                return '(%s %% 1000)::float8' % i, 'fl'
            op = r.random()
            if op < 0.5:
                return c[0], 'fl'
            if op < 0.7:
                return '(%s * 2)' % c[0], 'fl'
            if op < 0.8:
                i, _ = self.expr('int', depth + 1, aliases)
                return '(%s + (%s %% 1000))' % (c[0], i), 'fl'
            if op < 0.9:
                return '%s(%s)' % (self.ch(['round', 'floor', 'ceil', 'trunc']), c[0]), 'fl'
            return 'COALESCE(%s, -1.5)' % c[0], 'fl'
        if kind == 'date':
            c = self.col(['date'], aliases)
            if c is None:
                return self.date_lit(), 'date'
            op = r.random()
            if self.star and op >= 0.6:
                op = self.ch([0.1, 0.95, 0.85])
            if op < 0.6:
                return c[0], 'date'
            if op < 0.8:
                return '(%s + %s)' % (c[0], self.ch(['1', '30', '-7', '365'])), 'date'
            if op < 0.9:
                t = self.col(['ts', 'tz'], aliases)
                if t and self.p(0.4):
                    return '%s::date' % t[0], 'date'
                return "date_trunc('%s', %s)::date" % (self.ch(['month', 'year', 'week', 'quarter']), c[0]), 'date'
            return 'COALESCE(%s, %s)' % (c[0], self.date_lit()), 'date'
        if kind == 'ts':
            c = self.col(['ts', 'tz'], aliases)
            if c is None:
                d = self.col(['date'], aliases)
                if d is None:
                    return self.ts_lit(), 'ts'
                return '%s::timestamp' % d[0], 'ts'
            op = r.random()
            if self.star and op >= 0.8:
                op = 0.1
            if op < 0.6:
                return c[0], 'ts'
            if op < 0.8:
                return "date_trunc('%s', %s)" % (self.ch(['hour', 'day', 'month', 'week']), c[0]), 'ts'
            return "(%s + interval '%s')" % (c[0], self.ch(['1 hour', '2 days', '-30 minutes'])), 'ts'
        if kind == 'text':
            c = self.col(['text'], aliases)
            if c is None:
                return "'lit'", 'text'
            op = r.random()
            if self.star and c[0].startswith('f.') and op >= 0.85:
                op = 0.1
            if op < 0.75:
                return c[0], 'text'
            if op < 0.85:
                return 'COALESCE(%s, %s)' % (c[0], "'none'"), 'text'
            if op < 0.92:
                return 'upper(%s)' % c[0], 'text'
            return 'substr(%s, 1, 2)' % c[0], 'text'
        if kind == 'bool':
            c = self.col(['bool'], aliases)
            if c is None:
                return self.pred(depth + 1, aliases), 'bool'
            return c[0], 'bool'
        raise ValueError(kind)

    def text_lit_for(self, c):
        cname = c.split('.')[-1]
        key = c if c in TEXT_LITS else cname
        if key in TEXT_LITS:
            return self.ch(TEXT_LITS[key])
        if cname in TEXT_LITS:
            return self.ch(TEXT_LITS[cname])
        return self.ch(["'alpha'", "'red'", "'L1'", "'s1'", "'AIR'"])

    def cmp_pred(self, depth, aliases=None):
        r = self.r
        kind = self.ch(['int', 'int', 'int', 'num', 'date', 'text', 'text', 'ts', 'bool', 'fl'])
        if kind == 'int':
            e, k = self.expr('int', depth + 1, aliases)
            cname = e.split('.')[-1] if re.match(r'^\w+\.\w+$', e) else None
            op = r.random()
            if op < 0.55:
                return '%s %s %s' % (e, self.ch(['=', '<', '>', '<=', '>=', '<>']), self.int_lit(cname, k))
            if op < 0.7:
                a = int(self.int_lit(cname, k).strip('()'))
                b = int(self.int_lit(cname, k).strip('()'))
                lo, hi = min(a, b), max(a, b)
                return '%s %sBETWEEN %d AND %d' % (e, self.ch(['', '', 'NOT ']), lo, hi)
            if op < 0.85:
                lits = ', '.join(self.int_lit(cname, k) for _ in range(r.randint(1, 5)))
                if self.p(0.1):
                    lits += ', NULL'
                return '%s %sIN (%s)' % (e, self.ch(['', '', 'NOT ']), lits)
            if op < 0.93:
                e2, _ = self.expr('int', depth + 1, aliases)
                return '%s %s %s' % (e, self.ch(['=', '<', '>', '<>']), e2)
            return '%s IS %sNULL' % (e, self.ch(['', 'NOT ']))
        if kind == 'num':
            e, _ = self.expr('num', depth + 1, aliases)
            op = r.random()
            if op < 0.7:
                return '%s %s %s' % (e, self.ch(['=', '<', '>', '<=', '>=', '<>']), self.ch(['0', '10.5', '(-100)', '5000.25', '1.00', '99999.99']))
            if op < 0.85:
                return '%s BETWEEN %s AND %s' % (e, self.ch(['0', '(-50.5)', '1']), self.ch(['100', '2000.75', '5']))
            return '%s IS %sNULL' % (e, self.ch(['', 'NOT ']))
        if kind == 'fl':
            e, _ = self.expr('fl', depth + 1, aliases)
            return '%s %s %s' % (e, self.ch(['<', '>', '=', '<>']), self.ch(['0', '50.5', '-12.125', '100']))
        if kind == 'date':
            e, _ = self.expr('date', depth + 1, aliases)
            op = r.random()
            if op < 0.6:
                return '%s %s %s' % (e, self.ch(['=', '<', '>', '<=', '>=']), self.date_lit())
            if op < 0.8:
                a, b = sorted([self.date_lit(), self.date_lit()])
                return '%s BETWEEN %s AND %s' % (e, a, b)
            if op < 0.9:
                return '%s IS %sNULL' % (e, self.ch(['', 'NOT ']))
            e2, _ = self.expr('date', depth + 1, aliases)
            return '%s %s %s' % (e, self.ch(['<', '=', '>']), e2)
        if kind == 'ts':
            e, _ = self.expr('ts', depth + 1, aliases)
            if self.p(0.2):
                return '%s IS NULL' % e
            lit = self.ts_lit()
            if self.p(0.3):
                lit = "timestamptz '2021-03-%02d %02d:00:00%s'" % (self.r.randint(9, 31), self.r.randint(0, 23), self.ch(['+00', '-05', '+05:30']))
            return '%s %s %s' % (e, self.ch(['<', '>', '>=', '=']), lit)
        if kind == 'text':
            c = self.col(['text'], aliases)
            if c is None:
                return 'true'
            e = c[0]
            op = r.random()
            if self.star and e.startswith('f.') and op >= 0.9:
                op = self.ch([0.1, 0.5, 0.7, 0.85])
            if op < 0.1:
                # a substring of the column against the same substring of a value
                s, n = self.ch(['-1', '0', '1', '2', '4']), self.ch(['0', '1', '3', '8'])
                wrap = self.ch(['substring(%%s from %s for %s)' % (s, n), 'substr(%%s, %s)' % s,
                                'left(%%s, %s)' % n])
                return '%s %s %s' % (wrap % e, self.ch(['=', '<>']), wrap % self.text_lit_for(e))
            if op < 0.45:
                return '%s %s %s' % (e, self.ch(['=', '=', '<>', '<', '>=']), self.text_lit_for(e))
            if op < 0.65:
                return '%s %sLIKE %s' % (e, self.ch(['', 'NOT ']), self.ch(LIKE_PATS))
            if op < 0.8:
                lits = ', '.join(self.text_lit_for(e) for _ in range(r.randint(1, 4)))
                return '%s %sIN (%s)' % (e, self.ch(['', 'NOT ']), lits)
            if op < 0.9:
                return '%s IS %sNULL' % (e, self.ch(['', 'NOT ']))
            return 'length(%s) %s %d' % (e, self.ch(['<', '>', '=']), r.randint(0, 6))
        if kind == 'bool':
            c = self.col(['bool'], aliases)
            if c is None:
                return 'true'
            if self.star:
                return self.ch(['%s', 'NOT %s', '%s IS NULL', '%s = false', '%s IS NOT NULL']) % c[0]
            return self.ch(['%s', 'NOT %s', '%s IS NULL', '%s IS NOT TRUE', '%s IS DISTINCT FROM true', '%s = false']) % c[0]

    def pred(self, depth=0, aliases=None):
        r = self.r
        op = r.random()
        if depth > 2 or op < 0.6:
            return self.cmp_pred(depth, aliases)
        if op < 0.75:
            return '(%s AND %s)' % (self.pred(depth + 1, aliases), self.pred(depth + 1, aliases))
        if op < 0.92:
            return '(%s OR %s)' % (self.pred(depth + 1, aliases), self.pred(depth + 1, aliases))
        return 'NOT (%s)' % self.pred(depth + 1, aliases)

    def pred_rel(self, alias, table, depth):
        return self.pred(depth, aliases={alias})

    # ------------------------------------------------------------ aggregates
    def agg(self):
        r = self.r
        op = r.random()
        if self.star:
            while 0.80 <= op < 0.93:
                op = r.random()
        if op < 0.12:
            a = 'count(*)'
        elif op < 0.22:
            c = self.col(None)
            a = 'count(%s)' % c[0]
        elif op < 0.42:
            e, _ = self.expr(self.ch(['int', 'int', 'num', 'num', 'fl']))
            a = 'sum(%s)' % e
        elif op < 0.52:
            e, _ = self.expr(self.ch(['int', 'num', 'num', 'fl']))
            a = 'avg(%s)' % e
        elif op < 0.70:
            e, _ = self.expr(self.ch(['int', 'num', 'date', 'ts', 'fl'] + ([] if self.star else ['text'])))
            a = '%s(%s)' % (self.ch(['min', 'max']), e)
        elif op < 0.80:
            e, _ = self.expr(self.ch(['int', 'num']))
            a = 'sum(CASE WHEN %s THEN %s ELSE %s END)' % (self.pred(1), e, self.ch(['0', 'NULL', '1']))
        elif op < 0.84:
            e, _ = self.expr(self.ch(['int', 'num']))
            a = '%s(%s)' % (self.ch(['stddev', 'variance', 'var_pop', 'stddev_samp']), e)
        elif op < 0.87:
            a = '%s(%s)' % (self.ch(['bool_and', 'bool_or', 'every']), self.pred(1))
        elif op < 0.93:
            e, _ = self.expr(self.ch(['int', 'int', 'text', 'date', 'num']))
            a = '%s(DISTINCT %s)' % (self.ch(['count', 'count', 'sum' if 'text' not in e else 'count']), e)
            if re.search(r'\b(sum)\(DISTINCT', a) and not re.search(r'\.(i2|i4|i8|k1|k2|n|v|w)\b', a):
                a = a.replace('sum(DISTINCT', 'count(DISTINCT')
        else:
            a = 'count(*)'
        if op < 0.8 and self.p(0.12) and 'DISTINCT' not in a:
            a += ' FILTER (WHERE %s)' % self.pred(1)
        return a

    def group_expr(self):
        r = self.r
        op = r.random()
        if op < 0.45:
            c = self.col(['text', 'i2', 'i4', 'bool', 'date'], aliases=[a for (_, a) in self.rels if a != 'f'] or None)
            return c[0]
        if op < 0.65:
            c = self.col(['i2', 'i4', 'i8', 'text', 'date', 'bool', 'num', 'ts', 'tz'], aliases=['f'])
            return c[0]
        if op < 0.8:
            e, _ = self.expr('int', 1)
            return e if self.p(0.3) else '(%s) %% %d' % (e, self.ch([3, 10, 100]))
        if op < 0.88:
            e, _ = self.expr(self.ch(['date', 'ts']), 1)
            if self.p(0.3):
                return "date_trunc('%s', %s)" % (self.ch(['day', 'month', 'hour']), e)
            return "EXTRACT(%s FROM %s)" % (self.ch(['year', 'month', 'dow', 'hour', 'day']), e)
        if op < 0.94:
            return 'CASE WHEN %s THEN %s ELSE %s END' % (self.pred(1), "'a'", "'b'")
        if op < 0.97:
            # a float key; + 0 makes -0 0 (a group of both shows the first row's,
            # which PostgreSQL's parallel plans do not fix)
            e, _ = self.expr('fl', 1)
            return '(%s + 0)' % e
        c = self.col(['num'])
        if c is None:
            return self.group_expr()
        return self.ch([c[0], '(%s * 1.5)' % c[0], '(%s + 1.25)' % c[0]])

    # ------------------------------------------------------------ subqueries
    def subq_pred(self):
        r = self.r
        if self.world == 'fz':
            opts = [('k1', 'd1', 'k'), ('k2', 'd2', 'k'), ('k3', 'd3', 'k'), ('k1', 'd4', 'k'), ('kd', 'dd', 'd'),
                    ('k1', 'd2', 'v'), ('k3', 'd1', 'grp')]
            if self.fact == 'fs':
                opts = [('k1', 'd1', 'k'), ('k2', 'd2', 'k'), ('k1', 'd3', 'k'), ('k1', 'd4', 'k')]
        elif self.world == 'ssb':
            opts = [('lo_custkey', 'customer', 'c_custkey'), ('lo_suppkey', 'supplier', 's_suppkey'),
                    ('lo_partkey', 'part', 'p_partkey'), ('lo_orderdate', 'ssb_date', 'd_datekey')]
        else:
            if self.fact == 'lineitem':
                opts = [('l_orderkey', 'orders', 'o_orderkey'), ('l_partkey', 'part', 'p_partkey'),
                        ('l_suppkey', 'supplier', 's_suppkey'), ('l_partkey', 'partsupp', 'ps_partkey')]
            else:
                opts = [('o_custkey', 'customer', 'c_custkey')]
        fc, dt, dc = self.ch(opts)
        # build a pred over the subquery table alone
        saved = self.rels
        self.rels = [(dt, 's')]
        inner = self.pred(1)
        self.rels = saved
        form = r.random()
        if form < 0.35:
            return 'f.%s %sIN (SELECT s.%s FROM %s s WHERE %s)' % (fc, self.ch(['', '', 'NOT ']), dc, dt, inner)
        return '%sEXISTS (SELECT 1 FROM %s s WHERE s.%s = f.%s AND %s)' % (self.ch(['', 'NOT ']), dt, dc, fc, inner)

    # ------------------------------------------------------------ query
    def query(self):
        r = self.r
        self.build()
        shape = r.random()
        where = []
        for _ in range(self.ch([0, 1, 1, 2, 2, 3])):
            where.append(self.pred())
        if self.p(0.15):
            where.append(self.subq_pred())
        where += self.extra_where
        wsql = (' WHERE ' + ' AND '.join(where)) if where else ''
        if shape < 0.07:
            # plain join returning rows
            outs = []
            for _ in range(r.randint(1, 4)):
                c = self.col(None)
                outs.append(c[0])
            if r.random() < 0.3:
                e, _ = self.expr(self.ch(['int', 'num']))
                outs.append(e)
            return 'SELECT %s FROM %s%s' % (', '.join(outs), self.from_sql, wsql)
        if shape < 0.14:
            # DISTINCT
            outs = [self.group_expr() for _ in range(r.randint(1, 3))]
            return 'SELECT DISTINCT %s FROM %s%s' % (', '.join(outs), self.from_sql, wsql)
        ngroup = self.ch([0, 1, 1, 1, 2, 2, 3])
        gexprs = []
        for _ in range(ngroup):
            g = self.group_expr()
            if g not in gexprs:
                gexprs.append(g)
        keyed = [(t, a) for (t, a) in self.rels if a != 'f' and t in PKS]
        if keyed and self.p(0.12):
            t, a = self.ch(keyed)
            others = [c for (c, k, _) in self.tabs[t] if c != PKS[t] and k != 'numu']
            for c in [PKS[t]] + r.sample(others, min(len(others), r.randint(1, 3))):
                if '%s.%s' % (a, c) not in gexprs:
                    gexprs.append('%s.%s' % (a, c))
        aggs = [self.agg() for _ in range(r.randint(1, 4))]
        sel = gexprs + aggs
        sql = 'SELECT %s FROM %s%s' % (', '.join(sel), self.from_sql, wsql)
        if gexprs:
            gs = r.random()
            if gs < 0.15 and self.p(0.5):
                sql = sql.replace(' FROM ' + self.from_sql, ', grouping(%s) FROM %s' % (', '.join(gexprs), self.from_sql), 1)
            if gs < 0.08 and len(gexprs) >= 1:
                sql += ' GROUP BY ROLLUP (%s)' % ', '.join(gexprs)
            elif gs < 0.12 and len(gexprs) >= 2:
                sql += ' GROUP BY CUBE (%s)' % ', '.join(gexprs)
            elif gs < 0.15 and len(gexprs) >= 2:
                sql += ' GROUP BY GROUPING SETS ((%s), (%s), ())' % (gexprs[0], ', '.join(gexprs[1:]))
            else:
                sql += ' GROUP BY %s' % ', '.join(gexprs)
        if self.p(0.15):
            h = self.ch(['count(*) > %d' % r.randint(1, 200), 'sum(%s) > 0' % self.expr('int')[0],
                         'min(%s) < %s' % (self.expr('int')[0], self.int_lit()),
                         'count(*) FILTER (WHERE %s) >= 1' % self.pred(1)])
            sql += ' HAVING ' + h
        if self.p(0.08):
            n = len(sel) + (1 if 'grouping(' in sql.split(' FROM ')[0] else 0)
            sql += ' ORDER BY %s LIMIT %d' % (', '.join(str(i + 1) for i in range(n)), self.ch([1, 5, 50]))
        return sql


# ---------------------------------------------------------------- running
SCHEMAS = {'ssb': None, 'tpch': None}
GH_BASE = ['SET gpuhash.force = on', 'SET gpuhash.min_rows = 0']
PAR = ['SET max_parallel_workers_per_gather = 2', 'SET parallel_setup_cost = 0', 'SET parallel_tuple_cost = 0',
       'SET min_parallel_table_scan_size = 0']
SER = ['SET max_parallel_workers_per_gather = 0']
EXTRA_SETTINGS = [
    'SET gpuhash.enable_star = off', 'SET gpuhash.enable_fusion = off', "SET gpuhash.hash_table = 'bcht'",
    'SET gpuhash.chunk_rows = 997', 'SET gpuhash.service = off', 'SET gpuhash.enable_pool = off',
    'SET gpuhash.read_pages = off', 'SET gpuhash.ship_pages = off', "SET gpuhash.memory_limit = '1MB'",
    'SET gpuhash.enable_groupby = off', 'SET gpuhash.enable_join = off', "SET work_mem = '64kB'",
    "SET gpuhash.hash_table = 'hashgraph'", "SET gpuhash.memory_limit = '256kB'", 'SET gpuhash.chunk_rows = 64',
]


def wrap(q):
    return "SELECT count(*) || ':' || coalesce(md5(string_agg(t::text, '|' ORDER BY t::text)), '-') FROM (%s) t" % q


def run_psql(script, timeout=180):
    try:
        p = subprocess.run(['psql', '-X', '-At', '-v', 'VERBOSITY=verbose'], input=script,
                           capture_output=True, text=True, timeout=timeout)
        return p.stdout + p.stderr, p.returncode
    except subprocess.TimeoutExpired:
        return 'TIMEOUT', -1


def parse(out):
    """-> dict of sections: name -> ('ok', value) or ('err', sqlstate+msg)"""
    res = {}
    cur = None
    buf = []
    for line in out.split('\n'):
        m = re.match(r'^@@(\w+)$', line)
        if m:
            if cur:
                res[cur] = buf
            cur, buf = m.group(1), []
        elif cur:
            buf.append(line)
    if cur:
        res[cur] = buf
    return res


def outcome(lines):
    if lines is None:
        return ('missing', '')
    for l in lines:
        m = re.search(r'ERROR:\s+([0-9A-Z]{5}): (.*)', l)
        if m:
            return ('err', m.group(1), m.group(2))
    for l in lines:
        if re.match(r'^\d+:', l):
            return ('ok', l)
    txt = ' '.join(lines)
    if 'server closed' in txt or 'terminated' in txt or 'connection' in txt:
        return ('crash', txt[:300])
    return ('missing', txt[:300])


def script_for(schema, settings, q, explain=True):
    s = ['SET search_path = %s, public' % schema, "SET statement_timeout = '120s'"] + settings
    body = ';\n'.join(s) + ';\n'
    if explain:
        body += '\\echo @@EXPLAIN\nEXPLAIN (COSTS OFF) %s;\n' % q
    body += '\\echo @@RESULT\n%s;\n' % wrap(q)
    return body


GH_NODES = re.compile(r'Gpu(StarAgg|HashAgg|HashJoin)')


def run_one(seed):
    """-> (status, details, nodes) of the query of seed"""
    rng = random.Random(seed)
    g = Gen(rng)
    q = g.query()
    extra = []
    if rng.random() < 0.35:
        extra = rng.sample(EXTRA_SETTINGS, rng.choice([1, 1, 2]))
    par = rng.random() < 0.5
    tzs = ["SET timezone = '%s'" % g.tz]
    ref_out, _ = run_psql(script_for(g.schema, tzs + ['SET gpuhash.enabled = off'] + SER, q, explain=False))
    ref = outcome(parse(ref_out).get('RESULT'))
    ghs = tzs + GH_BASE + extra + (PAR if par else SER)
    gh_out, _ = run_psql(script_for(g.schema, ghs, q))
    sec = parse(gh_out)
    gh = outcome(sec.get('RESULT'))
    plan = '\n'.join(sec.get('EXPLAIN', []))
    nodes = sorted(set(GH_NODES.findall(plan)))
    status = 'same'
    if (ref[0] == 'err' and ref[1] == '57014') or (gh[0] == 'err' and gh[1] == '57014'):
        status = 'timeout'
    elif ref[0] == 'ok' and gh[0] == 'ok':
        status = 'same' if ref[1] == gh[1] else 'MISMATCH'
    elif ref[0] == 'err' and gh[0] == 'err':
        status = 'errsame' if ref[1] == gh[1] else 'ERRDIFF'
    elif 'crash' in (ref[0], gh[0]) or 'missing' in (ref[0], gh[0]):
        status = 'timeout' if 'TIMEOUT' in ref_out + gh_out or '57014' in ref_out + gh_out else 'CRASH'
    else:
        status = 'ERRDIFF'
    if status == 'ERRDIFF' and ((ref[0] == 'ok' and ref[1].startswith('0:')) or
                                (gh[0] == 'ok' and gh[1].startswith('0:'))):
        status = 'emptydep'   # an empty join may legitimately skip evaluating the other side
    if status == 'ERRDIFF':
        # does PostgreSQL itself, planned otherwise, give gpuhash's outcome?
        for alt in (PAR, ['SET enable_hashjoin = off', 'SET enable_mergejoin = off'] + SER,
                    ['SET join_collapse_limit = 1', 'SET from_collapse_limit = 1'] + SER,
                    ['SET enable_hashjoin = off'] + PAR,
                    # all groups made before an ORDER BY ... LIMIT takes the first
                    ['SET enable_incremental_sort = off', 'SET enable_indexscan = off',
                     'SET enable_mergejoin = off'] + SER,
                    ['SET enable_hashjoin = off', 'SET enable_nestloop = off'] + SER):
            ao, _ = run_psql(script_for(g.schema, tzs + ['SET gpuhash.enabled = off'] + alt, q, explain=False))
            a = outcome(parse(ao).get('RESULT'))
            if a[0] == gh[0] and (a[0] != 'ok' or a[1] == gh[1]):
                status = 'plandep'
                break
    details = dict(seed=seed, status=status, par=par, extra=extra, tz=g.tz, star=g.star, nodes=nodes, q=q,
                   ref=ref, gh=gh, plan=plan if status not in ('same', 'errsame') else '')
    return status, details, nodes


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--seed', type=int, default=int(time.time()))
    ap.add_argument('--count', type=int, default=1000000)
    ap.add_argument('--minutes', type=float, default=60)
    ap.add_argument('--tap', action='store_true')
    ap.add_argument('--log')
    ap.add_argument('--ssb')
    ap.add_argument('--tpch')
    ap.add_argument('--device', default=os.environ.get('GPUHASH_DEVICE', 'cpu'))
    ap.add_argument('--show', type=int)
    args = ap.parse_args()
    SCHEMAS['ssb'], SCHEMAS['tpch'] = args.ssb, args.tpch
    GH_BASE.insert(0, 'SET gpuhash.device = %s' % args.device)
    if args.show is not None:
        print(Gen(random.Random(args.show)).query())
        return 0
    log = open(args.log, 'a') if args.log else None
    t0 = time.time()
    stats = dict(run=0, gh=0, nodes={}, failed=0, errboth=0, timeout=0)
    for i in range(args.count):
        if time.time() - t0 > args.minutes * 60:
            break
        seed = args.seed * 100000 + i
        status, d, nodes = run_one(seed)
        failed = status in ('MISMATCH', 'ERRDIFF', 'CRASH')
        stats['run'] += 1
        stats['gh'] += 1 if nodes else 0
        for n in nodes:
            stats['nodes'][n] = stats['nodes'].get(n, 0) + 1
        stats['failed'] += failed
        stats['errboth'] += status == 'errsame'
        stats['timeout'] += status == 'timeout'
        if args.tap:
            print('%sok %d - seed %d: %s%s' % ('not ' if failed else '', stats['run'], seed, status,
                                               ' (%s)' % ', '.join(nodes) if nodes else ''))
        if failed:
            print('# %s seed=%d par=%s tz=%s extra=%s\n#   ref=%s\n#   gh=%s\n#   %s' %
                  (status, seed, d['par'], d['tz'], d['extra'], d['ref'], d['gh'], d['q']), flush=True)
        if log:
            log.write(json.dumps(d) + '\n')
            log.flush()
        if not args.tap and stats['run'] % 25 == 0:
            print('[%ds] %s' % (time.time() - t0, json.dumps(stats)), flush=True)
    # a fuzzer whose queries planned no gpuhash node would pass every comparison
    covered = stats['gh'] * 2 >= stats['run'] > 0
    if args.tap:
        print('%sok %d - gpuhash nodes in %d of %d plans: %s' %
              ('' if covered else 'not ', stats['run'] + 1, stats['gh'], stats['run'], json.dumps(stats['nodes'])))
        print('%d passed, %d failed' % (stats['run'] - stats['failed'] + covered,
                                        stats['failed'] + (not covered)))
    else:
        print('FINAL', json.dumps(stats), flush=True)
    return 1 if stats['failed'] or not covered else 0


if __name__ == '__main__':
    sys.exit(main())
