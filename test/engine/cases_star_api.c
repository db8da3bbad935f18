#include "star_test.h"
void
run_star_api_cases(gh_engine *e, const sdim *dims, rng *r)
{
	(void) e; (void) dims; (void) r;
}
