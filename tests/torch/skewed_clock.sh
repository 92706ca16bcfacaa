#!/bin/sh
# Test helper: runs "$@" with this torchrun worker's clock shifted by libfaketime, as if each rank
# ran on a host whose clock is off. Worker LOCAL_RANK r gets the (r+1)-th word of SKEWED_CLOCKS
# (seconds, "+0 +2 -1 +3"); SKEWED_CLOCK_LIB is libfaketime.so.1. libfaketime shifts
# CLOCK_REALTIME and, by default, CLOCK_MONOTONIC by the same amount.
# Usage: torchrun --no-python ... sh skewed_clock.sh python train.py ...
skew=$(echo "$SKEWED_CLOCKS" | cut -d' ' -f$((LOCAL_RANK + 1)))
LD_PRELOAD="$SKEWED_CLOCK_LIB${LD_PRELOAD:+:$LD_PRELOAD}" FAKETIME="$skew" exec "$@"
