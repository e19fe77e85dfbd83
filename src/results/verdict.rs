//! The one verdict model of every command that judges (`compare`, `ab`, and later `ddl`'s
//! points and methods): five states a figure, a side or a whole comparison can be in, each with
//! a stable JSON name, a text form and an exit status, and the rule that folds many states into
//! one and into the exit status of the command.
//!
//! | state | text | JSON | exit status |
//! |---|---|---|---|
//! | a run failed (any side, base included) | `FAILED` | `failed` | 4 |
//! | worse beyond the noise | `REGRESSION` | `regression` | 3 |
//! | too few runs for the rule, or a side whose load missed its rate | `NO VERDICT` | `no_verdict` | 5 |
//! | better beyond the noise | `IMPROVED` | `improved` | 0 |
//! | within the noise, with enough runs | `NO CHANGE` | `no_change` | 0 |
//!
//! Exit statuses 1 (an error: nothing was judged), 2 (a usage error, or a run whose self-check
//! failed) and 128 + a signal (stopped) are the other commands'; 3, 4 and 5 are the verdicts'.
//!
//! **The order** in which states fold ([`State::overall`]: the worst that applies wins):
//! FAILED > REGRESSION > NO VERDICT > IMPROVED > NO CHANGE. A failed run comes first because
//! whatever else was measured beside it may be wrong or missing (a step that failed has no
//! figures, so a failure can hide a regression but never the other way round); a regression is
//! a measured, judged harm and outranks a figure that could not be judged; a figure without a
//! verdict outranks an improvement because "some figures better, some unknown" is not a pass;
//! and a side with one figure better beyond the noise and the rest unchanged improved. Nothing
//! judged at all (no figure, no failure) is NO VERDICT. Only IMPROVED and NO CHANGE exit 0;
//! the user may let a state pass on purpose ([`PassOn`], `--pass-on no-verdict`).

use serde::{Deserialize, Serialize};

/// Exit status of REGRESSION (as `ixbench compare --fail-on-regression` always gave).
pub const EXIT_REGRESSION: u8 = 3;
/// Exit status of FAILED.
pub const EXIT_FAILED: u8 = 4;
/// Exit status of NO VERDICT.
pub const EXIT_NO_VERDICT: u8 = 5;

/// The state of a figure, a side or a comparison. Ordered from best to worst
/// ([`State::overall`] takes the largest).
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum State {
    /// Within the noise, with enough runs to tell.
    NoChange,
    /// Better beyond the noise.
    Improved,
    /// Not judged: too few runs for the rule, a side whose load missed its rate, a figure one
    /// side lacks.
    NoVerdict,
    /// Worse beyond the noise.
    Regression,
    /// A run failed: non-zero exit, a run or step status that is not ok, a failed self-check,
    /// a run that left no results.
    Failed,
}

impl State {
    /// Every state, best first.
    pub const ALL: [State; 5] = [
        State::NoChange,
        State::Improved,
        State::NoVerdict,
        State::Regression,
        State::Failed,
    ];

    /// The stable name in JSON: `failed`, `regression`, `no_verdict`, `improved`, `no_change`.
    pub fn name(self) -> &'static str {
        match self {
            State::NoChange => "no_change",
            State::Improved => "improved",
            State::NoVerdict => "no_verdict",
            State::Regression => "regression",
            State::Failed => "failed",
        }
    }

    /// The text form (tables, verdict lines, the HTML page): `FAILED`, `REGRESSION`,
    /// `NO VERDICT`, `IMPROVED`, `NO CHANGE`.
    pub fn text(self) -> &'static str {
        match self {
            State::NoChange => "NO CHANGE",
            State::Improved => "IMPROVED",
            State::NoVerdict => "NO VERDICT",
            State::Regression => "REGRESSION",
            State::Failed => "FAILED",
        }
    }

    /// The state a text form names (`NO VERDICT`), for readers of a table.
    pub fn from_text(s: &str) -> Option<State> {
        State::ALL.into_iter().find(|st| st.text() == s.trim())
    }

    /// The exit status of a command whose verdict is this state (without [`PassOn`]).
    pub fn exit_status(self) -> u8 {
        match self {
            State::NoChange | State::Improved => 0,
            State::NoVerdict => EXIT_NO_VERDICT,
            State::Regression => EXIT_REGRESSION,
            State::Failed => EXIT_FAILED,
        }
    }

    /// The worst of `states` (see the module's order); NO VERDICT when there are none.
    pub fn overall(states: impl IntoIterator<Item = State>) -> State {
        states.into_iter().max().unwrap_or(State::NoVerdict)
    }
}

impl std::fmt::Display for State {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.text())
    }
}

/// A state the user lets pass (exit 0) on purpose: `--pass-on no-verdict,failed,regression`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum PassOn {
    /// Too few runs, or a missed rate, exits 0.
    NoVerdict,
    /// A failed run exits 0 (what `compare` did before it judged failures).
    Failed,
    /// A regression exits 0 (what `compare` did without `--fail-on-regression`).
    Regression,
}

impl PassOn {
    /// The state it lets pass.
    pub fn state(self) -> State {
        match self {
            PassOn::NoVerdict => State::NoVerdict,
            PassOn::Failed => State::Failed,
            PassOn::Regression => State::Regression,
        }
    }
}

/// The option every judging command shares: which states exit 0 on purpose.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct PassArgs {
    /// Let these states exit 0 (comma-separated: no-verdict, failed, regression). By default
    /// only IMPROVED and NO CHANGE exit 0; REGRESSION exits 3, FAILED 4, NO VERDICT 5.
    #[arg(
        long = "pass-on",
        value_enum,
        value_delimiter = ',',
        value_name = "STATE"
    )]
    pub pass_on: Vec<PassOn>,
}

/// The exit status of a command whose figures and sides are in `states`: that of the worst
/// state the user did not let pass ([`PassOn`]), 0 when every state passes. With nothing
/// passed, the exit status of [`State::overall`].
pub fn exit_status(states: impl IntoIterator<Item = State>, pass_on: &[PassOn]) -> u8 {
    let mut states: Vec<State> = states.into_iter().collect();
    if states.is_empty() {
        states.push(State::NoVerdict);
    }
    states
        .into_iter()
        .filter(|s| !pass_on.iter().any(|p| p.state() == *s))
        .max()
        .map_or(0, State::exit_status)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_texts_and_exit_statuses_are_stable() {
        let table: Vec<(&str, &str, u8)> = State::ALL
            .iter()
            .map(|s| (s.name(), s.text(), s.exit_status()))
            .collect();
        assert_eq!(
            table,
            [
                ("no_change", "NO CHANGE", 0),
                ("improved", "IMPROVED", 0),
                ("no_verdict", "NO VERDICT", 5),
                ("regression", "REGRESSION", 3),
                ("failed", "FAILED", 4),
            ]
        );
        for s in State::ALL {
            assert_eq!(
                serde_json::to_value(s).unwrap(),
                serde_json::json!(s.name())
            );
            assert_eq!(State::from_text(s.text()), Some(s));
        }
    }

    #[test]
    fn the_worst_that_applies_wins() {
        use State::*;
        assert_eq!(State::overall([NoChange, Improved]), Improved);
        assert_eq!(State::overall([Improved, NoVerdict]), NoVerdict);
        assert_eq!(
            State::overall([NoVerdict, Regression, Improved]),
            Regression
        );
        assert_eq!(State::overall([Regression, Failed, NoChange]), Failed);
        assert_eq!(State::overall([]), NoVerdict);
    }

    #[test]
    fn passing_a_state_exits_as_the_next_worst() {
        use State::*;
        assert_eq!(exit_status([NoChange], &[]), 0);
        assert_eq!(exit_status([], &[]), 5);
        assert_eq!(exit_status([NoVerdict, Improved], &[]), 5);
        assert_eq!(exit_status([NoVerdict, Improved], &[PassOn::NoVerdict]), 0);
        assert_eq!(exit_status([Failed, Regression], &[PassOn::Failed]), 3);
        assert_eq!(
            exit_status([Failed, Regression], &[PassOn::Failed, PassOn::Regression]),
            0
        );
        assert_eq!(exit_status([Failed, NoVerdict], &[PassOn::NoVerdict]), 4);
    }
}
