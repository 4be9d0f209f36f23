//! The offline evaluators judge: a gap stays accepted, its mitigated twin
//! ends dismissed with the line that handles it, each credited safeguard
//! phrasing dismisses, negation and deferral do not, and a dismissal that
//! cites an off-topic line is reinstated by an evaluator that did not cite
//! it. Uses the small rule packs in tests/fixtures/judge with the built-in
//! protocols (the source of truth for what dismisses).

mod support;

use gauntlet::catalog::Catalog;
use gauntlet::concern::{Concern, Decision, RebuttalOutcome, Status};
use gauntlet::filter::NoFilter;
use gauntlet::pipeline::{Gauntlet, RunOptions};
use gauntlet::spec::Spec;
use gauntlet::verdict::Verdict;
use std::sync::Arc;
use support::fixture;

fn run(adversary: &str, doc: &str) -> Verdict {
    let catalog = Arc::new(Catalog::load(Some(&fixture("judge")), None).unwrap());
    let options = RunOptions {
        adversaries: vec![adversary.to_string()],
        ..RunOptions::default()
    };
    let g = Gauntlet::offline(catalog, options, false);
    g.run_blocking(&Spec::parse(None, doc.to_string()), &NoFilter, &|_| {})
}

/// The one concern the run raised.
#[track_caller]
fn only(v: &Verdict) -> &Concern {
    assert_eq!(v.concerns.len(), 1, "{:#?}", v.concerns);
    &v.concerns[0]
}

#[track_caller]
fn assert_dismissed_citing(v: &Verdict, line: usize) {
    let c = only(v);
    assert_eq!(c.status, Status::Dismissed, "{c:#?}");
    assert!(
        c.dismissal_cites().contains(&line),
        "expected line {line} cited: {:?}\n{c:#?}",
        c.dismissal_cites()
    );
}

#[track_caller]
fn assert_stands(v: &Verdict) {
    let c = only(v);
    assert!(c.status.requires_revision(), "{c:#?}");
}

const GAP: &str = "# Billing\n\n## Design\n\nThe worker calls the Billing API for each invoice.\nIt writes the result to Postgres.\n";

#[test]
fn a_gap_is_accepted_and_its_mitigated_twin_dismissed_with_the_cited_line() {
    let v = run("burned_oncall", GAP);
    assert_stands(&v);
    assert!(
        only(&v)
            .votes
            .iter()
            .all(|x| x.decision == Decision::Accept)
    );
    let twin = GAP.replace(
        "It writes",
        "Calls to the Billing API time out after 2 s.\nIt writes",
    );
    let v = run("burned_oncall", &twin);
    assert_dismissed_citing(&v, 6);
    // The rebuttal re-read line 6 and accepted it.
    let c = only(&v);
    assert_eq!(
        c.rebuttal.as_ref().map(|r| r.outcome),
        Some(RebuttalOutcome::Accepted)
    );
}

#[test]
fn negated_or_deferred_safeguards_do_not_dismiss() {
    for sentence in [
        "Calls to the Billing API have no timeout.",
        "We will add a timeout to the Billing API later.",
        "Should calls to the Billing API time out?",
    ] {
        let doc = GAP.replace("It writes", &format!("{sentence}\nIt writes"));
        let v = run("burned_oncall", &doc);
        let c = only(&v);
        assert_ne!(c.status, Status::Dismissed, "{sentence}: {c:#?}");
    }
}

#[test]
fn a_ttl_written_as_a_maximum_duration_is_credited() {
    let doc = "# Reset\n\n## Design\n\nReset tokens are emailed to the user.\n\nReset tokens have a maximum duration of 30 minutes, then the link stops working.\n";
    assert_dismissed_citing(&run("paranoid_security", doc), 7);
    let gap = "# Reset\n\n## Design\n\nReset tokens are emailed to the user.\n\nThere is no maximum duration for a link.\n";
    assert_stands(&run("paranoid_security", gap));
}

#[test]
fn complementary_bounds_are_not_a_boundary_gap() {
    let doc = "# Fraud\n\n## Scoring\n\n- Orders scoring `< 50` ship at once.\n- Orders scoring `>= 50` are held for review.\n";
    assert_dismissed_citing(&run("pedantic_nitpicker", doc), 6);
    // Both sides include 50: a real boundary gap.
    let gap = doc.replace("`< 50`", "`<= 50`");
    assert_stands(&run("pedantic_nitpicker", &gap));
}

const PARSER: &str =
    "# Rules\n\n## Design\n\nWe write our own `rulefile` parser for the rule files.\n";

#[test]
fn a_why_heading_justifies_the_custom_thing() {
    assert_stands(&run("lazy_developer", PARSER));
    let doc = format!(
        "{PARSER}\n## Why a custom `rulefile` parser?\n\nThe files keep comments and ordering that editors rely on, because users edit them by hand.\n"
    );
    assert_dismissed_citing(&run("lazy_developer", &doc), 9);
}

#[test]
fn an_alternatives_section_justifies_the_custom_thing() {
    let doc = format!(
        "{PARSER}\n## Alternatives considered\n\n- A YAML library for `rulefile`: rejected because it drops the comments users rely on.\n"
    );
    assert_dismissed_citing(&run("lazy_developer", &doc), 9);
}

#[test]
fn a_blanket_rule_in_goals_is_credited() {
    let doc = "# Billing\n\n## Goals\n\n- Timeouts on all outbound calls, 2 s at most.\n\n## Design\n\nThe worker calls the Billing API for each invoice.\n";
    assert_dismissed_citing(&run("burned_oncall", doc), 5);
}

#[test]
fn a_timeout_field_in_a_config_example_is_credited() {
    let doc = "# Billing\n\n## Design\n\nThe worker calls the Billing API for each invoice.\n\n## Configuration\n\n```yaml\nbilling_api:\n  url: https://billing.internal\n  timeout: 2s\n```\n";
    assert_dismissed_citing(&run("burned_oncall", doc), 12);
    let strukt = "# Billing\n\n## Design\n\nThe worker calls the Billing API for each invoice.\n\n## Client\n\n```go\ntype BillingClient struct {\n    BaseURL string\n    Timeout time.Duration\n}\n```\n";
    assert_dismissed_citing(&run("burned_oncall", strukt), 12);
    // A timeout field of another component's config does not count.
    let other = doc
        .replace("billing_api:", "search_api:")
        .replace("billing.internal", "search.internal");
    assert_stands(&run("burned_oncall", &other));
}

#[test]
fn a_task_level_deadline_is_credited() {
    let doc = "# Export\n\n## Design\n\nThe nightly export job writes every invoice to S3.\nEach export task must finish within 20 minutes or the scheduler kills it.\n";
    assert_dismissed_citing(&run("burned_oncall", doc), 6);
}

#[test]
fn an_off_topic_citation_is_reinstated_by_an_evaluator_that_did_not_cite_it() {
    // A section-scoped rule: the lenient models find a timeout in the
    // section, but it is the Warehouse's, far from the Billing API call.
    let doc = "# Billing\n\n## Design\n\nThe worker frobnicates the Billing API for each invoice.\n\nUnrelated paragraph one.\n\nUnrelated paragraph two.\n\nThe nightly export to the Warehouse has a 10 minute timeout.\n";
    let v = run("burned_oncall", doc);
    let c = only(&v);
    assert_eq!(c.status, Status::Reinstated, "{c:#?}");
    let r = c.rebuttal.as_ref().unwrap();
    assert_eq!(r.outcome, RebuttalOutcome::Challenged);
    assert!(r.reasoning.contains("line 11"), "{}", r.reasoning);
    let a = c.adjudication.as_ref().unwrap();
    let adjudicator = a.adjudicator.as_deref().unwrap();
    assert!(
        !r.challenged.iter().any(|e| e == adjudicator),
        "{adjudicator} adjudicated its own challenged citation: {:?}",
        r.challenged
    );
    // The adjudicator is an evaluator of this run that did not cite line 11.
    assert!(v.models.eval.iter().any(|e| e == adjudicator));
    let adjudicator_vote = c.votes.iter().find(|x| x.evaluator == adjudicator).unwrap();
    assert!(
        !adjudicator_vote.cites.contains(&11) || adjudicator_vote.decision != Decision::Dismiss
    );
    assert_eq!(v.stats.rebuttal.sustained, 1);
}

#[test]
fn a_safeguard_stated_absent_on_the_concerns_line_is_not_answered_elsewhere() {
    let twin = "# Billing\n\n## Design\n\nThe worker calls the Billing API for each invoice.\n\n## Reports\n\nThe report page reads the Billing API cache with a 2 s timeout.\n";
    // Elsewhere, a line about the same component states a timeout: credited.
    assert_dismissed_citing(&run("burned_oncall", twin), 9);
    // The design line itself says there is none: that line is about
    // another call, so the concern stands.
    let gap = twin.replace(
        "for each invoice.",
        "for each invoice and waits without a timeout.",
    );
    assert_stands(&run("burned_oncall", &gap));
    // Qualified in its own paragraph, it is answered.
    let own = gap.replace(
        "without a timeout.",
        "without a timeout.\nThe whole run is killed after a 10 minute timeout.",
    );
    assert_dismissed_citing(&run("burned_oncall", &own), 6);
}

#[test]
fn an_absence_stated_by_the_attackers_own_match_is_not_answered_elsewhere() {
    // The lexicon reads no denied timeout in "with no upper bound",
    // but the matched text itself says there is no bound: the report
    // page's timeout in the next paragraph is about another call.
    let gap = "# Billing\n\n## Design\n\nThe worker polls the Billing API with no upper bound until the invoice settles.\n\nThe report page reads the Billing API cache with a 2 s timeout.\n";
    assert_stands(&run("burned_oncall", gap));
    // Its own paragraph still answers it.
    let own = gap.replace(
        "settles.\n",
        "settles.\nThe polling loop stops at a 10 minute timeout.\n",
    );
    assert_dismissed_citing(&run("burned_oncall", &own), 6);
}

#[test]
fn another_row_of_a_schema_table_is_another_field() {
    let doc = "# Payouts\n\n## Schema\n\n| Column | Type |\n|---|---|\n| id | bigint |\n| amount | double |\n";
    assert_stands(&run("pedantic_nitpicker", doc));
    // The row itself states the exact type.
    let own = doc.replace("| double |", "| double, stored as integer cents |");
    assert_dismissed_citing(&run("pedantic_nitpicker", &own), 8);
    // Rows of a table that is not a schema are aspects of one design.
    let notes = doc.replace("| Column | Type |", "| Item | Decision |");
    assert_dismissed_citing(&run("pedantic_nitpicker", &notes), 7);
}

#[test]
fn another_item_of_a_component_list_is_another_component() {
    let doc = "# Billing\n\n## Architecture\n\n- **Worker**: calls the Billing API for each invoice.\n- **Reporter**: reads the invoice cache, with a 2 s timeout.\n";
    assert_stands(&run("burned_oncall", doc));
    // Its own item, nested items included, still answers it.
    let own = doc.replace(
        "for each invoice.\n",
        "for each invoice.\n  - requests time out after 2 s\n",
    );
    assert_dismissed_citing(&run("burned_oncall", &own), 6);
    // A list of plain sentences is one paragraph about one design.
    let plain = doc
        .replace("**Worker**: calls", "The worker calls")
        .replace("**Reporter**: reads", "It reads");
    assert_dismissed_citing(&run("burned_oncall", &plain), 6);
}
