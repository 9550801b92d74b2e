"""The SQL DuckDB runs for each case of the suite (docs/peers.md, "DuckDB: the SQL of each
operation"), and the comparison of its answer with the suite's reference answer.

Relations reach DuckDB as NumPy columns, never as text: an RA relation of 1 + V words per tuple is
registered as `a` (and `b`) with columns k, v1..vV (UINTEGER, the suite's 32-bit words; for sort
and unique also i, the row's position in `a`: position_column); a TPC-H plan
input i as `t<i>` with columns c0..cN. Pure functions: no DuckDB import here, so the mapping can be
read and tested without it."""
import numpy as np

U32 = 4294967296  # 2^32: the suite's value arithmetic wraps modulo 2^32


class NoSql(ValueError):
    """An operation or plan step that has no SQL here: its cases are recorded as skipped, saying so.
    Any other error while a case is prepared (an unreadable .npy file) is an error, never a skip."""


def value_cols(values, prefix=""):
    return [f"{prefix}v{i}" for i in range(1, values + 1)]


def ra_columns(values):
    return ["k"] + value_cols(values)


POSITIONED = ("sort", "unique")  # the operations whose SQL reads the position column of `a`


def position_column(op):
    """The column of row positions (0, 1, ...) an operation's SQL needs on its input `a`, or None.
    sort: the suite's is stable (std::stable_sort: equal keys keep their input order) and SQL's ORDER
    BY is not (DuckDB's is not, measured), so the sort orders by (key, position): the same operation.
    unique: the suite keeps per key the first tuple in input order (what a stable sort then unique
    gives, on input sorted or not), which SQL finds only by position: arg_min(value, position)."""
    return "i" if op in POSITIONED else None


def ra_sql(op, args, values):
    """The SQL of one RA primitive on `a` (and `b`) whose tuples carry `values` value attributes.
    Returns (sql, order): order is 'exact' (the suite's operator fixes the order: input order for
    project, select and the arithmetic, which DuckDB keeps under preserve_insertion_order, set by
    run_case; key order by ORDER BY for sort), 'multiset' (the suite's order is not the SQL's to give:
    join, whose order within a key is unspecified, GROUP BY (unique, reduce_by_key), the set
    operations, the product; from unsorted input (a case's input=unsorted) the suite leaves the output
    order of these unspecified too; both sides are sorted before comparing) or 'none' (one aggregate
    row). A case's `input` (sorted or unsorted) changes only the rows handed over, never the SQL:
    unique reads the input's order through the position column (position_column), the others'
    answers do not depend on it."""
    vs = value_cols(values)
    cols = ", ".join(ra_columns(values))
    if op == "project":
        names = ra_columns(values)
        return "SELECT " + ", ".join(f"{names[c]} AS c{i}" for i, c in enumerate(args["columns"])) + " FROM a", "exact"
    if op == "select":
        col = ra_columns(values)[args["attribute"]]
        return f"SELECT {cols} FROM a WHERE {col} BETWEEN {args['lo']} AND {args['hi']}", "exact"
    if op == "unique":
        # Per key, the first tuple in input order (position i): what the suite's stable sort then
        # unique keeps, and on input sorted by (key, values) the least tuple of each key. A hash
        # aggregation, as DuckDB runs a GROUP BY; the positions are distinct, so arg_min has no tie.
        pos = position_column(op)
        parts = [f"arg_min({v}, {pos}) AS {v}" for v in vs]
        return "SELECT " + ", ".join(["k"] + parts) + " FROM a GROUP BY k", "multiset"
    if op == "reduce":
        fold = args["op"]
        if fold == "sum":  # exact 64-bit sums; 0 for an empty relation
            parts = [f"COALESCE(sum({v}), 0)::UBIGINT AS {v}" for v in vs]
        elif fold == "min":  # identities of an empty relation: 0xffffffff for min, 0 for max
            parts = [f"COALESCE(min({v}), {U32 - 1})::UBIGINT AS {v}" for v in vs]
        else:
            parts = [f"COALESCE(max({v}), 0)::UBIGINT AS {v}" for v in vs]
        return "SELECT " + ", ".join(parts) + " FROM a", "none"
    if op == "reduce_by_key":
        fold = args["op"]
        if fold == "sum":  # sums wrap modulo 2^32, as the suite's
            parts = [f"(sum({v}) % {U32})::UINTEGER AS {v}" for v in vs]
        else:
            parts = [f"{fold}({v}) AS {v}" for v in vs]
        return "SELECT k, " + ", ".join(parts) + " FROM a GROUP BY k", "multiset"
    if op == "join":
        out = ["a.k AS k"] + [f"a.{v} AS l{v}" for v in vs] + [f"b.{v} AS r{v}" for v in vs]
        return "SELECT " + ", ".join(out) + " FROM a JOIN b ON a.k = b.k", "multiset"
    if op == "set_union":
        # std::set_union on multisets: max(count in a, count in b) copies = a + (b - a).
        return f"SELECT {cols} FROM a UNION ALL (SELECT {cols} FROM b EXCEPT ALL SELECT {cols} FROM a)", "multiset"
    if op == "set_intersection":  # min(count in a, count in b)
        return f"SELECT {cols} FROM a INTERSECT ALL SELECT {cols} FROM b", "multiset"
    if op == "set_difference":  # max(count in a - count in b, 0)
        return f"SELECT {cols} FROM a EXCEPT ALL SELECT {cols} FROM b", "multiset"
    if op == "product":
        out = ["a.k AS k"] + [f"a.{v} AS a{v}" for v in vs] + ["b.k AS bk"] + [f"b.{v} AS b{v}" for v in vs]
        return "SELECT " + ", ".join(out) + " FROM a CROSS JOIN b", "multiset"
    if op in ("add", "subtract", "multiply"):
        # Row i of a with row i of b (the suite's operands are positional): POSITIONAL JOIN.
        if op == "add":
            expr = "((a.{v}::UBIGINT + b.{v}) % " + str(U32) + ")::UINTEGER AS {v}"
        elif op == "subtract":
            expr = "((a.{v}::BIGINT - b.{v} + " + str(U32) + ") % " + str(U32) + ")::UINTEGER AS {v}"
        else:
            expr = "((a.{v}::UBIGINT * b.{v}) % " + str(U32) + ")::UINTEGER AS {v}"
        return "SELECT a.k AS k, " + ", ".join(expr.format(v=v) for v in vs) + " FROM a POSITIONAL JOIN b", "exact"
    if op == "sort":  # stable: ties in input order, by the position column (position_column)
        return f"SELECT {cols} FROM a ORDER BY k, {position_column(op)}", "exact"
    raise NoSql(f"no SQL for the RA operation '{op}'")


def plan_sql(steps, input_widths):
    """A tpch plan (bench/tpch.cpp, model/tpch_plan.hpp) as one SQL query: every step a CTE named
    r<id> over relations r<id> (inputs are `t<i>` with columns c0..; step i makes relation
    inputs + i), select = WHERE c BETWEEN lo AND hi, join = inner equi-join with all left columns then
    the right's except its key, project = the listed columns. DuckDB plans the whole query (it may
    reorder, push selects down and fuse); the answer is the last step's relation."""
    widths = list(input_widths)
    ctes = [f"r{i} AS (SELECT * FROM t{i})" for i in range(len(widths))]
    for s in steps:
        rid = len(widths)
        src = s["in"]
        if s["op"] == "select":
            sql = f"SELECT * FROM r{src} WHERE c{s['col']} BETWEEN {s['lo']} AND {s['hi']}"
            w = widths[src]
        elif s["op"] == "join":
            lw, rw, rc = widths[src], widths[s["right"]], s["right_col"]
            out = [f"l.c{j} AS c{j}" for j in range(lw)]
            out += [f"r.c{j} AS c{lw + n}" for n, j in enumerate(j for j in range(rw) if j != rc)]
            sql = f"SELECT {', '.join(out)} FROM r{src} l JOIN r{s['right']} r ON l.c{s['col']} = r.c{rc}"
            w = lw + rw - 1
        elif s["op"] == "project":
            sql = "SELECT " + ", ".join(f"c{c} AS c{j}" for j, c in enumerate(s["cols"])) + f" FROM r{src}"
            w = len(s["cols"])
        else:
            raise NoSql(f"no SQL for the plan step '{s['op']}'")
        ctes.append(f"r{rid} AS ({sql})")
        widths.append(w)
    return "WITH " + ",\n     ".join(ctes) + f"\nSELECT * FROM r{len(widths) - 1}", "multiset"


# --- comparing answers ----------------------------------------------------------------------------
def _row_hash(cols):
    """A 64-bit hash of every row (multiply-xorshift over the columns), to put equal rows side by side."""
    with np.errstate(over="ignore"):
        h = np.full(len(cols[0]), 0x9E3779B97F4A7C15, dtype=np.uint64)
        for c in cols:
            h ^= c.astype(np.uint64)
            h *= np.uint64(0xBF58476D1CE4E5B9)
            h ^= h >> np.uint64(31)
    return h


def _rows_sorted(cols, exact=False):
    """Columns (equal lengths) reordered so that equal multisets of rows come out row for row equal:
    by a row hash (fast; rows whose hashes collide may come out in different orders, which can only
    make a comparison fail, never pass), or with exact=True lexicographically (slow, the fallback)."""
    if not cols or len(cols[0]) == 0:
        return cols
    if len(cols) == 1:
        return [np.sort(cols[0])]
    if exact:
        order = np.lexsort(tuple(reversed(cols)))
    else:
        order = np.argsort(_row_hash(cols))  # ties: equal rows, or a collision (then the exact fallback)
    return [c[order] for c in cols]


def _first_difference(got_cols, want_cols):
    for j, (g, w) in enumerate(zip(got_cols, want_cols, strict=False)):
        diff = np.nonzero(g != w)[0]
        if len(diff):
            i = int(diff[0])
            return f"row {i} column {j}: {int(g[i])}, expected {int(w[i])}"
    return ""


def compare(got, want, order):
    """got: the query's columns in output order (a list of 1-D arrays); want: the reference answer as a
    (columns, rows) array. Returns (equal, detail). Values are compared as 64-bit integers."""
    want_cols = [np.asarray(want[i]).astype(np.int64) for i in range(want.shape[0])]
    got_cols = []
    for j, c in enumerate(got):
        if isinstance(c, np.ma.MaskedArray):
            if np.ma.count_masked(c):
                return False, "the answer holds NULLs"
            c = c.filled(0)
        c = np.asarray(c)
        if c.dtype.kind not in "iu":  # a float would be truncated, an object column would not compare
            return False, f"column {j} is of type {c.dtype}, not an integer (the suite's words are integers)"
        got_cols.append(c.astype(np.int64))
    if len(got_cols) != len(want_cols):
        return False, f"{len(got_cols)} columns, expected {len(want_cols)}"
    rows = want.shape[1]
    for c in got_cols:
        if len(c) != rows:
            return False, f"{len(c)} rows, expected {rows}"
    if order == "multiset" and _first_difference(got_cols, want_cols):
        # Not equal in the order they came: equal as multisets? Rows sorted by hash, then (only if
        # that still differs) lexicographically, which decides exactly.
        g, w = _rows_sorted(got_cols), _rows_sorted(want_cols)
        if _first_difference(g, w):
            g, w = _rows_sorted(got_cols, exact=True), _rows_sorted(want_cols, exact=True)
        diff = _first_difference(g, w)
        if diff:
            return False, "sorted " + diff
    else:
        diff = _first_difference(got_cols, want_cols)
        if diff:
            return False, diff
    how = {"multiset": " as a multiset", "none": "", "exact": " in order"}
    return True, f"all {rows} rows equal the reference{how.get(order, '')}"


# --- ssb: the Star Schema Benchmark's 13 queries --------------------------------------------------
# The tables reach DuckDB as the suite holds them (workloads/ssb_tables.hpp, docs/ssb.md): `lineorder`,
# `date`, `customer`, `supplier`, `part`, columns named as the specification's, 32-bit integers, strings
# as dictionary codes. The codes of the strings the queries name, from the same dictionaries:
SSB_REGION = {"AFRICA": 0, "AMERICA": 1, "ASIA": 2, "EUROPE": 3, "MIDDLE EAST": 4}
SSB_NATION = {"UNITED STATES": 24}        # ssb-dbgen's (TPC-H's) nation order: UNITED STATES is the last
SSB_CITY = {"UNITED KI1": 23 * 10 + 1, "UNITED KI5": 23 * 10 + 5}  # nation x 10 + digit (UNITED KINGDOM 23)


def ssb_mfgr(m):  # 'MFGR#m' -> m - 1
    return m - 1


def ssb_category(mc):  # 'MFGR#mc' -> (m - 1) x 5 + (c - 1)
    m, c = divmod(mc, 10)
    return (m - 1) * 5 + (c - 1)


def ssb_brand(mcb):  # 'MFGR#mcbb' (brand 1..40) -> category x 40 + (b - 1)
    return ssb_category(mcb // 100) * 40 + (mcb % 100 - 1)


def ssb_yearmonth(year, month):  # 'Dec1997' -> (year - 1992) x 12 + month - 1
    return (year - 1992) * 12 + month - 1


_SSB_AGG = {
    "1": "COALESCE(sum(lo_extendedprice::BIGINT * lo_discount), 0)::BIGINT AS revenue",
    "2": "sum(lo_revenue::BIGINT)::BIGINT AS revenue",
    "3": "sum(lo_revenue::BIGINT)::BIGINT AS revenue",
    "4": "sum(lo_revenue::BIGINT - lo_supplycost)::BIGINT AS profit",
}
_Q1 = "FROM lineorder, date WHERE lo_orderdate = d_datekey AND "
_Q2 = ("FROM lineorder, date, part, supplier WHERE lo_orderdate = d_datekey AND lo_partkey = p_partkey "
       "AND lo_suppkey = s_suppkey AND ")
_Q3 = ("FROM customer, lineorder, supplier, date WHERE lo_custkey = c_custkey AND lo_suppkey = s_suppkey "
       "AND lo_orderdate = d_datekey AND ")
_Q4 = ("FROM date, customer, supplier, part, lineorder WHERE lo_custkey = c_custkey AND lo_suppkey = s_suppkey "
       "AND lo_partkey = p_partkey AND lo_orderdate = d_datekey AND ")
_CITIES = f"c_city IN ({SSB_CITY['UNITED KI1']}, {SSB_CITY['UNITED KI5']}) " \
          f"AND s_city IN ({SSB_CITY['UNITED KI1']}, {SSB_CITY['UNITED KI5']})"
_MFGR12 = f"p_mfgr IN ({ssb_mfgr(1)}, {ssb_mfgr(2)})"
# name -> (FROM and WHERE, the group-by columns in the order of the suite's answer). The specification's
# SQL (rev. 3), string constants as codes (the string in the comment of docs/ssb.md's table). Q2.3 is the
# specification's MFGR#2239. No ORDER BY: the answer is compared as rows sorted by group key (docs/ssb.md).
SSB_QUERIES = {
    "1.1": (_Q1 + "d_year = 1993 AND lo_discount BETWEEN 1 AND 3 AND lo_quantity < 25", []),
    "1.2": (_Q1 + "d_yearmonthnum = 199401 AND lo_discount BETWEEN 4 AND 6 AND lo_quantity BETWEEN 26 AND 35", []),
    "1.3": (_Q1 + "d_weeknuminyear = 6 AND d_year = 1994 AND lo_discount BETWEEN 5 AND 7 "
            "AND lo_quantity BETWEEN 26 AND 35", []),
    "2.1": (_Q2 + f"p_category = {ssb_category(12)} AND s_region = {SSB_REGION['AMERICA']}", ["d_year", "p_brand1"]),
    "2.2": (_Q2 + f"p_brand1 BETWEEN {ssb_brand(2221)} AND {ssb_brand(2228)} AND s_region = {SSB_REGION['ASIA']}",
            ["d_year", "p_brand1"]),
    "2.3": (_Q2 + f"p_brand1 = {ssb_brand(2239)} AND s_region = {SSB_REGION['EUROPE']}", ["d_year", "p_brand1"]),
    "3.1": (_Q3 + f"c_region = {SSB_REGION['ASIA']} AND s_region = {SSB_REGION['ASIA']} "
            "AND d_year >= 1992 AND d_year <= 1997", ["c_nation", "s_nation", "d_year"]),
    "3.2": (_Q3 + f"c_nation = {SSB_NATION['UNITED STATES']} AND s_nation = {SSB_NATION['UNITED STATES']} "
            "AND d_year >= 1992 AND d_year <= 1997", ["c_city", "s_city", "d_year"]),
    "3.3": (_Q3 + _CITIES + " AND d_year >= 1992 AND d_year <= 1997", ["c_city", "s_city", "d_year"]),
    "3.4": (_Q3 + _CITIES + f" AND d_yearmonth = {ssb_yearmonth(1997, 12)}", ["c_city", "s_city", "d_year"]),
    "4.1": (_Q4 + f"c_region = {SSB_REGION['AMERICA']} AND s_region = {SSB_REGION['AMERICA']} AND {_MFGR12}",
            ["d_year", "c_nation"]),
    "4.2": (_Q4 + f"c_region = {SSB_REGION['AMERICA']} AND s_region = {SSB_REGION['AMERICA']} "
            f"AND d_year IN (1997, 1998) AND {_MFGR12}", ["d_year", "s_nation", "p_category"]),
    "4.3": (_Q4 + f"c_region = {SSB_REGION['AMERICA']} AND s_nation = {SSB_NATION['UNITED STATES']} "
            f"AND d_year IN (1997, 1998) AND p_category = {ssb_category(14)}", ["d_year", "s_city", "p_brand1"]),
}


def ssb_sql(name, group_by=None):
    """The SQL of SSB query `name` ('1.1' .. '4.3'): its group-by columns then its aggregate, in the
    order of the suite's answer. group_by (the exported manifest's) must be the query's own: a
    different list is an error, never a differently ordered answer. Returns (sql, 'multiset')."""
    if name not in SSB_QUERIES:
        raise NoSql(f"no SQL for the SSB query '{name}'")
    where, group = SSB_QUERIES[name]
    if group_by is not None and list(group_by) != group:
        raise ValueError(f"Q{name}: the suite groups by {group_by}, the SQL by {group}")
    select = ", ".join(group + [_SSB_AGG[name[0]]])
    tail = f" GROUP BY {', '.join(group)}" if group else ""
    return f"SELECT {select} {where}{tail}", "multiset"
