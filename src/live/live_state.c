/* live_state: what the files of the live module share besides the state's types (see
 * live_state.h): the stage histogram's bounds and freeing the latest row's series. */
#include "live/live_state.h"

#include <stdlib.h>

const double live_stage_bounds[LIVE_STAGE_BUCKETS] = {
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
    0.5,    1,       2.5,    5,     10,     30,    60,   300,   900,  3600,
};

void live_state_free_series(struct live_metrics *m)
{
    for (size_t i = 0; i < m->n_series; i++) {
        free(m->series[i].name);
        free(m->series[i].labels);
    }
    free(m->series);
    free(m->order);
    m->series = NULL;
    m->order = NULL;
    m->n_series = 0;
}
