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
    s.adapt(200_000); // came 200 us after the spin began
    assertThat(s.budgetNanos()).isEqualTo(250_000);
    s.adapt(260_000); // the next one 260 us after
    assertThat(s.budgetNanos()).isEqualTo(325_000);
  }

  @Test
  void theBudgetGrowsAtMostTwentyFoldAndNeverBeyondOneMillisecond() {
    PollSpin s = spin(BUDGET);
    for (int i = 0; i < 10; i++) {
      s.adapt(850_000);
      assertThat(s.budgetNanos()).isBetween(BUDGET, 1_000_000L);
    }
    PollSpin small = spin(10_000);
    small.adapt(160_000); // a quarter more is past 20 x 10 us
    assertThat(small.budgetNanos()).as("20 x 10 us").isEqualTo(200_000);
    small.adapt(450_000); // more than the largest budget catches
    assertThat(small.budgetNanos()).isEqualTo(100_000);
    PollSpin huge = spin(Long.MAX_VALUE); // "never sleep" written as a budget
    huge.adapt(Long.MAX_VALUE);
    assertThat(huge.budgetNanos()).isEqualTo(Long.MAX_VALUE);
    PollSpin large = spin(5_000_000);
    large.adapt(5_001_000);
    assertThat(large.budgetNanos()).as("a budget above 1 ms does not grow, nor shrink below itself").isEqualTo(5_000_000);
  }

  @Test
  void aQuietLoopHalvesItsBudgetBackToTheConfiguredOne() {
    PollSpin s = spin(BUDGET);
    s.adapt(550_000);
    assertThat(s.budgetNanos()).isEqualTo(687_500);
    s.adapt(2_000_000_000L); // two seconds of nothing
    assertThat(s.budgetNanos()).isEqualTo(343_750);
    for (int i = 0; i < 10; i++) {
      s.adapt(2_000_000_000L);
    }
    assertThat(s.budgetNanos()).isEqualTo(BUDGET);
  }

  @Test
  void aWakeIsTimedOnlyAfterASpinGaveUpAndCountsOnlyIfItsDrainDelivered() {
    PollSpin s = spin(BUDGET);
    s.awoke(); // no spin gave up before this sleep (no demand, or a timer): nothing timed
    s.drained(1);
    assertThat(s.budgetNanos()).isEqualTo(BUDGET);
  }

  @Test
  void busyAndNoSpinLoopsDoNotAdapt() {
    PollSpin busy = spin(-1);
    busy.adapt(10_000);
    assertThat(busy.budgetNanos()).isEqualTo(-1);
    PollSpin none = spin(0);
    none.adapt(10_000);
    assertThat(none.budgetNanos()).isZero();
  }
}
