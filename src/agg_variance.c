/*-------------------------------------------------------------------------
 *
 * agg_variance.c
 *	  variance and standard deviation of integers and numerics finished from
 *	  a count, a sum and a sum of squares by PostgreSQL's own final functions.
 *
 * INTERFACE ROUTINES
 *		gpuhash_variance_aggregate	is an aggregate one this file can finish?
 *		gpuhash_variance_final		SQL: its result from n, sum(x), sum(x * x)
 *
 * variance, var_samp, var_pop, stddev, stddev_samp and stddev_pop of int2,
 * int4, int8 and numeric keep the count and the exact sums of x and of x * x
 * (NaN and the infinities counted apart); their final functions compute the
 * result from those with numeric arithmetic whose scales depend on every
 * step (agg_twolevel.c splits the aggregate into those three partial
 * values, which a GROUP BY computes on the device).  Rather than repeat that
 * arithmetic, gpuhash_variance_final writes the three values in the form of
 * the aggregate's own serialized partial state (its deserialization
 * function's input: the count, then each sum as numericvar_serialize writes
 * it; for numeric states also the largest scale and the special values'
 * counts), has the aggregate's deserialization function read it and its
 * final function finish it: the result is PostgreSQL's, digit for digit.
 * Both functions must run in an aggregate's context (AggCheckCallContext);
 * an AggState node that is never executed stands for it.  A sum that is
 * NaN or infinite (an input was) makes a state with one NaN counted, from
 * which the final function gives NaN, as it does for any special input.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_aggregate.h"
#include "catalog/pg_namespace.h"
#include "catalog/pg_proc.h"
#include "fmgr.h"
#include "libpq/pqformat.h"
#include "nodes/execnodes.h"
#include "utils/fmgroids.h"
#include "utils/fmgrprotos.h"
#include "utils/lsyscache.h"
#include "utils/numeric.h"
#include "utils/syscache.h"

#include "agg.h"

PG_FUNCTION_INFO_V1(gpuhash_variance_final);

static const char *const variance_names[] = {
	"variance", "var_samp", "var_pop", "stddev", "stddev_samp", "stddev_pop"
};

/*
 * The deserialization and final functions of aggregate aggfnoid where it is
 * one of PostgreSQL's variances or standard deviations of integers or
 * numerics; false otherwise.
 */
static bool
variance_functions(Oid aggfnoid, Oid *deserialfn, Oid *finalfn)
{
	HeapTuple	tup;
	Form_pg_proc proc;
	Form_pg_aggregate agg;
	bool		found = false;

	/* one of PostgreSQL's, by name (every query's aggregates are asked) */
	tup = SearchSysCache1(PROCOID, ObjectIdGetDatum(aggfnoid));
	if (!HeapTupleIsValid(tup))
		return false;
	proc = (Form_pg_proc) GETSTRUCT(tup);
	for (int i = 0; i < lengthof(variance_names) && proc->pronamespace == PG_CATALOG_NAMESPACE; i++)
		found |= strcmp(NameStr(proc->proname), variance_names[i]) == 0;
	ReleaseSysCache(tup);
	if (!found)
		return false;
	tup = SearchSysCache1(AGGFNOID, ObjectIdGetDatum(aggfnoid));
	if (!HeapTupleIsValid(tup))
		return false;
	agg = (Form_pg_aggregate) GETSTRUCT(tup);
	*deserialfn = agg->aggdeserialfn;
	*finalfn = agg->aggfinalfn;
	ReleaseSysCache(tup);
	return (*deserialfn == F_NUMERIC_DESERIALIZE || *deserialfn == F_NUMERIC_POLY_DESERIALIZE) &&
		OidIsValid(*finalfn);
}

bool
gpuhash_variance_aggregate(Oid aggfnoid)
{
	Oid			deserialfn,
				finalfn;

	return variance_functions(aggfnoid, &deserialfn, &finalfn);
}

/* A finite numeric as numericvar_serialize writes it: from numeric_send's form. */
static void
send_numericvar(StringInfo buf, Numeric num)
{
	bytea	   *sent = DatumGetByteaPP(DirectFunctionCall1(numeric_send, NumericGetDatum(num)));
	StringInfoData in;
	int			ndigits;

	in.data = VARDATA_ANY(sent);
	in.len = VARSIZE_ANY_EXHDR(sent);
	in.maxlen = in.len;
	in.cursor = 0;
	ndigits = (uint16) pq_getmsgint(&in, 2);
	pq_sendint32(buf, ndigits);
	pq_sendint32(buf, (int16) pq_getmsgint(&in, 2));	/* weight */
	pq_sendint32(buf, (uint16) pq_getmsgint(&in, 2));	/* sign */
	pq_sendint32(buf, (uint16) pq_getmsgint(&in, 2));	/* dscale */
	for (int i = 0; i < ndigits; i++)
		pq_sendint16(buf, (int16) pq_getmsgint(&in, 2));
	pq_getmsgend(&in);
}

/*
 * What a call site of gpuhash_variance_final looks up once (fn_extra): the
 * aggregate's deserialization and final functions, and the AggState they
 * are called in.
 */
typedef struct VarianceCall
{
	Oid			aggfnoid;
	bool		is_numeric;		/* a NumericAggState (else a PolyNumAggState) */
	FmgrInfo	deserial;
	FmgrInfo	final;
	AggState   *context;
} VarianceCall;

static VarianceCall *
variance_call(FunctionCallInfo fcinfo, Oid aggfnoid)
{
	VarianceCall *vc = fcinfo->flinfo->fn_extra;
	Oid			deserialfn,
				finalfn;
	MemoryContext old;

	if (vc != NULL && vc->aggfnoid == aggfnoid)
		return vc;
	if (!variance_functions(aggfnoid, &deserialfn, &finalfn))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("gpuhash_variance_final: %u is not a variance or standard deviation of integers or numerics",
						aggfnoid)));
	old = MemoryContextSwitchTo(fcinfo->flinfo->fn_mcxt);
	if (vc == NULL)
	{
		vc = palloc0(sizeof(VarianceCall));
		vc->context = makeNode(AggState);
	}
	vc->aggfnoid = aggfnoid;
	vc->is_numeric = deserialfn == F_NUMERIC_DESERIALIZE;
	fmgr_info_cxt(deserialfn, &vc->deserial, fcinfo->flinfo->fn_mcxt);
	fmgr_info_cxt(finalfn, &vc->final, fcinfo->flinfo->fn_mcxt);
	MemoryContextSwitchTo(old);
	fcinfo->flinfo->fn_extra = vc;
	return vc;
}

/* A NULL sum (over no values) is 0. */
static Numeric
sum_or_zero(FunctionCallInfo fcinfo, int arg)
{
	return PG_ARGISNULL(arg) ? int64_to_numeric(0) : PG_GETARG_NUMERIC(arg);
}

/*
 * gpuhash_variance_final(aggregate oid, n int8, sx numeric, sxx numeric):
 * the aggregate's result over n values whose sum is sx and sum of squares
 * sxx.
 */
Datum
gpuhash_variance_final(PG_FUNCTION_ARGS)
{
	int64		n = PG_ARGISNULL(1) ? 0 : PG_GETARG_INT64(1);
	Numeric		sx = sum_or_zero(fcinfo, 2);
	Numeric		sxx = sum_or_zero(fcinfo, 3);
	bool		special = numeric_is_nan(sx) || numeric_is_inf(sx) ||
		numeric_is_nan(sxx) || numeric_is_inf(sxx);
	VarianceCall *vc;
	StringInfoData buf;
	bytea	   *state;
	LOCAL_FCINFO(call, 2);
	Datum		partial,
				result;

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("gpuhash_variance_final: no aggregate")));
	vc = variance_call(fcinfo, PG_GETARG_OID(0));
	if (n < 0 || (special && (!vc->is_numeric || n == 0)))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("gpuhash_variance_final: no values of the aggregate's type have these sums")));

	/* the aggregate's serialized state */
	pq_begintypsend(&buf);
	pq_sendint64(&buf, special ? n - 1 : n);
	send_numericvar(&buf, special ? int64_to_numeric(0) : sx);
	send_numericvar(&buf, special ? int64_to_numeric(0) : sxx);
	if (vc->is_numeric)
	{
		pq_sendint32(&buf, 0);		/* maxScale: for avg and sum alone */
		pq_sendint64(&buf, 0);		/* maxScaleCount */
		pq_sendint64(&buf, special ? 1 : 0);	/* NaNcount */
		pq_sendint64(&buf, 0);		/* pInfcount */
		pq_sendint64(&buf, 0);		/* nInfcount */
	}
	state = pq_endtypsend(&buf);

	/* deserialized, then finished, as in an aggregate */
	InitFunctionCallInfoData(*call, &vc->deserial, 2, InvalidOid, (Node *) vc->context, NULL);
	call->args[0].value = PointerGetDatum(state);
	call->args[0].isnull = false;
	call->args[1].value = (Datum) 0;
	call->args[1].isnull = true;
	partial = FunctionCallInvoke(call);
	InitFunctionCallInfoData(*call, &vc->final, 1, InvalidOid, (Node *) vc->context, NULL);
	call->args[0].value = partial;
	call->args[0].isnull = false;
	result = FunctionCallInvoke(call);
	if (call->isnull)
		PG_RETURN_NULL();
	PG_RETURN_DATUM(result);
}
