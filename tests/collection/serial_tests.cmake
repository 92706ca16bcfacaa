# Included by ctest after the discovered GoogleTest cases (TEST_INCLUDE_FILES): tests that must
# not share the CPU with other tests.
set_tests_properties(
  Collection.MillionLaunchesLoseNothing
  Collection.CappedPoolCountsEveryLostRecordPlusAtMostOneOverheadRecordPerRefusal
  Collection.MatmulSmallIsCpuBoundLargeIsGpuBoundOnStandInCostModel
  GpuCollection.MatmulSmallIsCpuBoundLargeIsGpuBound
  GpuCollection.MatmulTableOverheadBoundAtSmallComputeBoundAtLarge
  GpuCollection.ManyLaunchesLoseNothing
  PROPERTIES RUN_SERIAL TRUE)
