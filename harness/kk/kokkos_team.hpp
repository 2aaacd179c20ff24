// pmkk on real Kokkos: team scratch, team barriers, multi-dimensional ranges,
// single(PerThread) and atomics are Kokkos' own, mapped in kokkos.hpp; the
// kokkos backend includes this header after it when a kernel uses them, as
// it includes the other layers' <layer>_team.hpp. A reduction over a
// TeamThreadRange is Kokkos' team reduction (kk/team_reduce.hpp is not
// used: the generated pm_team_sum view stays unread).
#pragma once
#include "kokkos.hpp"
#include "pm/scratch.hpp"
