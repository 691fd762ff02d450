/* assert_near: the cmocka check the numeric unit tests share: |actual - expected| <=
 * tol * max(1, |expected|), reported with both values. Include after <cmocka.h> and <math.h>. */
#ifndef MLBENCH_TEST_ASSERT_NEAR_H
#define MLBENCH_TEST_ASSERT_NEAR_H

#define assert_near(actual, expected, tol)                                                     \
    do {                                                                                       \
        double act_ = (actual), exp_ = (expected);                                             \
        if (!(fabs(act_ - exp_) <= (tol) * fmax(1.0, fabs(exp_)))) {                           \
            print_error("%s = %.17g, expected %.17g\n", #actual, act_, exp_);                  \
            fail();                                                                            \
        }                                                                                      \
    } while (0)

#endif
