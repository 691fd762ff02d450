/* jsonx: tolerant typed getters, and a number-or-null builder (see jsonx.h). */
#include "util/jsonx.h"

#include <math.h>

double jsonx_number(const json_t *v)
{
    return json_is_number(v) ? json_number_value(v) : NAN;
}

double jsonx_num(const json_t *o, const char *key)
{
    return jsonx_number(json_object_get(o, key));
}

const char *jsonx_str(const json_t *o, const char *key)
{
    return json_string_value(json_object_get(o, key));
}

long long jsonx_count(const json_t *o, const char *key, long long max, long long fallback)
{
    double v = jsonx_num(o, key);
    if (!(v >= 0 && v <= (double)max) || v != floor(v)) /* false for NaN too */
        return fallback;
    return (long long)v;
}

long long jsonx_int(const json_t *o, const char *key, long long fallback)
{
    const json_t *v = json_object_get(o, key);
    if (json_is_integer(v))
        return json_integer_value(v);
    if (json_is_real(v)) {
        double d = json_real_value(v);
        if (d >= -9.2e18 && d <= 9.2e18) /* false for NaN too */
            return llround(d);
    }
    return fallback;
}

const json_t *jsonx_object(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    return json_is_object(v) ? v : NULL;
}

const json_t *jsonx_array(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    return json_is_array(v) ? v : NULL;
}

int jsonx_bool(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    return json_is_boolean(v) ? json_is_true(v) : -1;
}

json_t *jsonx_real_or_null(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

json_t *jsonx_count_or_null(double v)
{
    return isfinite(v) && fabs(v) < 1e15 ? json_integer((json_int_t)v) : json_null();
}
