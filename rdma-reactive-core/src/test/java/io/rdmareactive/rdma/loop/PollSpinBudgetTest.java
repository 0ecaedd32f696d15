package io.rdmareactive.rdma.loop;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/** The event-mode loop's poll budget adapts: it grows to catch completions a sleep would have cost a wakeup for, and falls back once the loop goes quiet. */
class PollSpinBudgetTest {
  private static final long BUDGET = 50_000;

  private static PollSpin spin(long budget) {
    return new PollSpin(null, List.of(), budget, null);
  }

  @Test
  void aCompletionSoonAfterTheSpinGaveUpGrowsTheBudgetToAQuarterMoreThanTheWholeWait() {
    PollSpin s = spin(BUDGET);
    assertThat(s.budgetNanos()).isEqualTo(BUDGET);
    s.woke(150_000); // waited 200 us in all
    assertThat(s.budgetNanos()).isEqualTo(250_000);
    s.woke(10_000); // the next one came 10 us into the sleep: 260 us in all
    assertThat(s.budgetNanos()).isEqualTo(325_000);
  }

  @Test
  void theBudgetGrowsAtMostTwentyFoldAndNeverBeyondOneMillisecond() {
    PollSpin s = spin(BUDGET);
    for (int i = 0; i < 10; i++) {
      s.woke(800_000);
      assertThat(s.budgetNanos()).isBetween(BUDGET, 1_000_000L);
    }
    PollSpin small = spin(10_000);
    small.woke(150_000); // 160 us in all, and a quarter more is past 20 x 10 us
    assertThat(small.budgetNanos()).as("20 x 10 us").isEqualTo(200_000);
    small.woke(250_000); // 450 us: more than the largest budget catches
    assertThat(small.budgetNanos()).isEqualTo(100_000);
    PollSpin large = spin(5_000_000);
    large.woke(1_000);
    assertThat(large.budgetNanos()).as("a budget above 1 ms does not grow, nor shrink below itself").isEqualTo(5_000_000);
  }

  @Test
  void aQuietLoopHalvesItsBudgetBackToTheConfiguredOne() {
    PollSpin s = spin(BUDGET);
    s.woke(500_000);
    assertThat(s.budgetNanos()).isEqualTo(687_500);
    s.woke(2_000_000_000L); // two seconds of nothing
    assertThat(s.budgetNanos()).isEqualTo(343_750);
    for (int i = 0; i < 10; i++) {
      s.woke(2_000_000_000L);
    }
    assertThat(s.budgetNanos()).isEqualTo(BUDGET);
  }

  @Test
  void busyAndNoSpinLoopsDoNotAdapt() {
    PollSpin busy = spin(-1);
    busy.woke(10_000);
    assertThat(busy.budgetNanos()).isEqualTo(-1);
    PollSpin none = spin(0);
    none.woke(10_000);
    assertThat(none.budgetNanos()).isZero();
  }
}
