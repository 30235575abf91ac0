"""Content pools for the demo corpus (``corpus``): invented conversations, no real data.

Everything here is plain data. A *scenario* is a tuple of :class:`Beat` (one user turn and the
assistant's answer, optionally through tool calls, :class:`Step`). Templates use ``{slot}``
placeholders that the generator (``parts.Slots``) fills lazily and consistently within one scenario instance
(``SIMPLE`` pools, ``GROUPS`` of values that belong together, and computed slots such as
versions, numbers and fake secrets). Literal braces are written ``{{`` / ``}}``.

All names, hosts (``*.internal``, ``example.com``/``.net``/``.org``), customers and papers are
made up.
"""

from __future__ import annotations

from typing import NamedTuple


class Step(NamedTuple):
    """One tool call (assistant ``toolCall`` block) and its ``toolResult``."""

    tool: str
    args: tuple[tuple[str, str], ...]  # (argument, template)
    result: tuple[str, ...]  # alternatives
    pre: tuple[str, ...] = ()  # optional short text before the call
    error: bool = False


class Beat(NamedTuple):
    user: tuple[str, ...]
    reply: tuple[str, ...]
    steps: tuple[Step, ...] = ()
    think: tuple[str, ...] = ()


def _t(value: str | tuple[str, ...]) -> tuple[str, ...]:
    return (value,) if isinstance(value, str) else tuple(value)


def step(tool: str, result, pre=(), error: bool = False, **args: str) -> Step:
    return Step(tool, tuple(args.items()), _t(result), _t(pre), error)


def exec_step(command: str, result, pre=(), error: bool = False) -> Step:
    """An ``exec`` step."""
    return step("exec", result, pre, error, command=command)


def beat(user, reply, steps=(), think=()) -> Beat:
    return Beat(_t(user), _t(reply), tuple(steps), _t(think))


# --------------------------------------------------------------------------- slot pools

SIMPLE: dict[str, tuple[str, ...]] = {
    "svc": ("billing-api", "orders-svc", "auth-gateway", "search-indexer", "notify-worker",
            "checkout-web", "inventory-sync", "media-resizer"),
    "env": ("production", "production", "staging"),
    "ns": ("prod", "prod-eu", "apps"),
    "person": ("Maya", "Jonas", "Priya", "Tomás", "Aiko", "Dmitri", "Lena", "Noor", "Felix", "Sam"),
    "person2": ("Ines", "Kwame", "Hana", "Oskar", "Ravi", "Zoe", "Mateo", "Yuki"),
    "host": ("db-prod-2.internal", "pg-primary-1.internal", "pg-replica-3.internal",
             "worker-7.internal", "edge-1.internal"),
    "db": ("orders", "billing", "accounts", "analytics"),
    "domain": ("api.example.com", "shop.example.net", "status.example.org", "auth.example.com",
               "cdn.example.net"),
    "repo": ("acme/storefront", "acme/billing", "acme/platform", "acme/infra"),
    "branch": ("fix/flaky-refund-test", "feat/invoice-batching", "chore/bump-sqlalchemy",
               "fix/pool-leak", "feat/search-cache"),
    "job": ("invoice-sync", "email-digest", "search-reindex", "stock-reconcile"),
    "thirdparty": ("the tax API", "the shipping-rates API", "the fraud-scoring service"),
    "city1": ("Lyon", "Berlin", "Amsterdam", "Milan", "Zurich"),
    "city2": ("Paris", "Munich", "Brussels", "Turin", "Geneva"),
    "customer": ("Hannah Cole", "Marcus Webb", "Aisha Rahman", "Daniel Ortiz", "Grace Liu",
                 "Oliver Brandt", "Chloé Dubois", "Kenji Watanabe"),
    "plan": ("Starter", "Pro", "Team", "Business"),
    "month": ("October", "November", "September"),
    "agent_name": ("Alex from Support", "the Support team", "Robin (Support)"),
    "product": ("search", "recommendations", "support-bot", "docs Q&A"),
    "weekday": ("Friday", "Thursday", "Monday"),
}

# name -> (keys, rows): choosing one row sets all its keys, so the values stay coherent.
GROUPS: dict[str, tuple[tuple[str, ...], tuple[tuple[str, ...], ...]]] = {
    "testcase": (
        ("test", "test_file", "other_test", "cause", "fixture", "fix", "got", "want"),
        (
            ("test_refund_rounds_half_even", "tests/test_refunds.py",
             "test_refund_partial_currency", "module-level Decimal context set to ROUND_DOWN",
             "decimal_ctx", "restores the Decimal context after each test",
             "Decimal('10.04')", "Decimal('10.05')"),
            ("test_session_expiry_utc", "tests/test_sessions.py", "test_login_sets_cookie",
             "frozen clock that is never unfrozen", "frozen_clock",
             "stops the freezegun patcher in a finalizer",
             "datetime(2026, 3, 29, 1, 0)", "datetime(2026, 3, 29, 2, 0)"),
            ("test_checkout_applies_coupon_once", "tests/test_checkout.py",
             "test_coupon_stacking", "cached coupon registry shared between tests",
             "coupon_registry", "builds a fresh registry per test", "2", "1"),
            ("test_webhook_retry_backoff", "tests/test_webhooks.py", "test_webhook_signature",
             "patched time.sleep that is never restored", "fake_sleep",
             "uses monkeypatch so the patch is undone automatically", "[1, 2, 4]",
             "[1, 2, 4, 8]"),
            ("test_export_csv_unicode", "tests/test_export.py", "test_export_locale_fallback",
             "process-wide locale switched to C", "locale_guard",
             "saves and restores the locale around the test", "'Caf?'", "'Café'"),
        ),
    ),
    "prcase": (
        ("pr_topic", "pr_file", "review_bug", "review_nit", "review_gap"),
        (
            ("batch the invoice PDF renders", "billing/pdf.py",
             "the worker pool is created per request and never closed, so under load each "
             "request opens a new connection pool", "`render_all` could be a generator",
             "the empty-invoice case"),
            ("add retry logic to the payment webhook", "payments/webhook.py",
             "retries are not idempotent: a retried `charge.succeeded` marks the order paid "
             "twice", "the magic number 5 should be a setting", "a retry after a timeout"),
            ("cache product search results", "search/cache.py",
             "the cache key ignores the locale, so French users can get German results",
             "the TTL of 3600 deserves a comment", "invalidation after a price change"),
            ("move the session store to Redis", "auth/session_store.py",
             "`expire` is called after `set`, so a crash in between leaves keys without a TTL "
             "(use `SET ... EX`)", "unused import of `pickle`", "what happens when Redis is down"),
        ),
    ),
    "leak": (
        ("leak_cause", "leak_fix"),
        (
            ("CSV export endpoint opened a database session outside the request scope",
             "wrap the export in `with Session() as s:` and stream from a server-side cursor"),
            ("new audit middleware started a transaction before auth and only committed on "
             "success", "commit or roll back in a `finally` block"),
            ("retry decorator retried inside an open transaction",
             "move the retry outside the session context"),
        ),
    ),
    "migcase": (
        ("table", "col", "coltype", "rows", "rows_n"),
        (
            ("orders", "discount_cents", "integer", "18.2M", "18200000"),
            ("invoices", "tax_region", "text", "4.6M", "4600000"),
            ("users", "last_login_at", "timestamptz", "920k", "920000"),
            ("subscriptions", "trial_ends_at", "timestamptz", "310k", "310000"),
            ("payments", "idempotency_key", "uuid", "27.5M", "27500000"),
        ),
    ),
    "topic": (
        ("research_topic", "paper1", "paper2", "paper3", "finding1", "finding2", "finding3",
         "takeaway", "slug"),
        (
            ("retrieval reranking",
             "Cheap Rerankers Are All You Need (Mostly)",
             "Listwise Distillation for Small Cross-Encoders",
             "When Does Hybrid Search Beat Dense Retrieval?",
             "a 60M-parameter cross-encoder trained on synthetic queries recovers about 90% of "
             "the gain of a 7B reranker at a fraction of the latency.",
             "distilling listwise scores from a large model beats pointwise training on four of "
             "five benchmarks, with the biggest gains on long documents.",
             "hybrid BM25 + dense retrieval wins whenever queries contain rare identifiers "
             "(error codes, SKUs); on conversational queries dense alone is as good.",
             "a small reranker on top of hybrid retrieval is the best cost/quality trade-off "
             "for us", "reranking"),
            ("speculative decoding",
             "Draft Trees Without a Draft Model",
             "Speculation at Batch Size 64",
             "Acceptance Rates Are Not Enough",
             "building draft trees from n-gram statistics of the prompt gives a 1.8x speed-up "
             "on code completion without training anything.",
             "the speed-up mostly disappears at large batch sizes unless the verifier is "
             "memory-bound; they propose adaptive draft lengths.",
             "acceptance rate is a misleading metric; wall-clock latency per token should be "
             "reported together with GPU utilisation.",
             "speculative decoding helps our latency-bound chat path but not the batch jobs",
             "speculative-decoding"),
            ("benchmark contamination",
             "Detecting Test-Set Leakage from Model Outputs",
             "Rewritten Benchmarks Still Leak",
             "A Contamination Audit of Twelve Open Models",
             "membership inference on completion probabilities flags contaminated items with "
             "0.81 AUC.",
             "paraphrasing benchmark questions reduces but does not remove the advantage of "
             "contaminated models.",
             "seven of twelve audited models show signs of having seen at least one popular "
             "benchmark during training.",
             "we should keep a private, regularly refreshed eval set instead of public "
             "benchmarks", "contamination"),
            ("agent memory",
             "Episodic Memory for Tool-Using Agents",
             "Forgetting on Purpose: Memory Decay in Long-Running Assistants",
             "Search Beats Summaries for Agent Recall",
             "storing compact episode summaries and retrieving them by task similarity "
             "improves multi-day task completion by 14 points.",
             "deliberately decaying old memories reduces contradictions without hurting "
             "recall on recent tasks.",
             "full-text search over raw transcripts outperforms rolling summaries when the "
             "question asks for an exact detail (a number, a command, an error message).",
             "keep raw transcripts searchable; summaries alone lose the details people ask "
             "about", "agent-memory"),
        ),
    ),
    "ticketcase": (
        ("issue", "issue_cause", "issue_fix"),
        (
            ("the export button does nothing in Safari",
             "a known bug in the last release: the download uses an API Safari blocks in "
             "private windows",
             "use a normal window or the CSV link in Settings → Data until the fix ships"),
            ("invoices show the wrong company address",
             "the billing address was cached before they updated it",
             "I cleared the cache and regenerated the last two invoices"),
            ("the mobile app logs them out every few minutes",
             "their device clock is 9 minutes off, so tokens look expired",
             "enable automatic date & time on the phone"),
        ),
    ),
}

# --------------------------------------------------------------------------- scenarios

SCENARIOS: dict[str, tuple[Beat, ...]] = {}

SCENARIOS["flaky_test"] = (
    beat(("{test} failed again on CI for {repo}, third time this week. It passes locally. Can "
       "you figure out what's going on?",
       "CI is red on {branch}: {test} in {test_file}. Looks like a flaky test, can you dig in?"),
      ("It is a flaky test, not a real regression: {n_fail} of 50 runs failed, always with "
       "`{got} != {want}`. It only fails when it runs after `{other_test}`, which leaves a "
       "{cause} behind. I'll isolate that fixture next.",),
      (exec_step("pytest {test_file} -k {test} -p randomly --count 50 -q",
         "....F.........F..........F......\n=================== FAILURES ===================\n"
         "_____________ {test} _____________\nE   AssertionError: assert {got} == {want}\n"
         "{n_fail} failed, {n_pass} passed in 14.82s", pre="Running it 50 times in random "
         "order to see how flaky it is.", error=True),),
      ("Passes locally, fails on CI intermittently: classic ordering or shared-state problem. "
       "Run it in a loop with random ordering first.",)),
    beat(("Makes sense. Can you fix the fixture instead of just marking it xfail?",
       "Please don't skip it, fix the root cause.",
       "Fix `{fixture}` properly, no xfail. {person} will review.",
       "So {other_test} leaks state into {test}? Make the fixture clean up after itself."),
      ("Fixed: the `{fixture}` fixture now {fix}, and its scope is `function` instead of "
       "`module`, so every test gets a clean copy. No more shared state between "
       "`{other_test}` and `{test}`.",
       "The root cause was the {cause}. `{fixture}` is function-scoped now and {fix}; "
       "`{test}` passes on its own and after `{other_test}`. Pushed to `{branch}`.",
       "Done without xfail: `{fixture}` {fix}. I also added a check that fails loudly if a "
       "test leaves a {cause} behind, so `{test}` can't silently flake again."),
      (step("read", "@pytest.fixture(scope=\"module\")\ndef {fixture}():\n    ...\n    yield state\n",
         path="{test_file}"),
       step("edit", "Successfully replaced text in {test_file}.", path="{test_file}",
         oldText="@pytest.fixture(scope=\"module\")",
         newText="@pytest.fixture(scope=\"function\")"))),
    beat(("Run it a few hundred times to be sure.", "Can you hammer it in a loop before we merge?",
       "Loop {test} 300 times with random order before I approve.",
       "prove it: run {test_file} in a loop, random order"),
      ("300/300 green. I pushed the fix to `{branch}` and left a note on the PR explaining why "
       "the flaky test was order-dependent.",),
      (exec_step("pytest {test_file} -p randomly --count 300 -q -x", "300 passed in 61.40s"),)),
    beat(("nice, thanks", "Great, thank you!", "Thanks, that test has annoyed {person} for weeks.",
       "perfect, merging {branch} now", "Good catch on the {fixture} fixture, thanks."),
      ("Anytime. I also removed it from the quarantine list so CI treats it as a normal test "
       "again.", "You're welcome. If it flakes again, the seed is in the CI log: rerun with "
       "`-p randomly -p \"randomly_seed=<seed>\"` to reproduce.")),
)

SCENARIOS["code_review"] = (
    beat(("Can you review PR #{pr} on {repo}? It's {person}'s change to {pr_topic}.",
       "Review request: #{pr} in {repo} ({pr_topic}). Be thorough, it touches prod paths."),
      ("Code review of #{pr}:\n\n1. **Bug**: {review_bug}.\n2. **Nit**: {review_nit}.\n3. "
       "Tests cover the happy path but not {review_gap}.\n\nOverall it's close; I'd request "
       "changes for (1) only.",),
      (exec_step("gh pr diff {pr} --repo {repo} | head -200",
         "diff --git a/{pr_file} b/{pr_file}\n@@ -41,12 +41,29 @@\n+    for attempt in "
         "range(5):\n+        try:\n+            return submit(payload)\n+        except "
         "TimeoutError:\n+            continue"),)),
    beat(("Post that as a review comment, but keep it friendly.",
       "Leave that on #{pr}, kindly: it's {person}'s first big change.",
       "Please post the review on {repo}#{pr}; tone it down a little.",
       "ok post it, request changes only for the bug"),
      ("Posted. I softened the wording on the nit and thanked {person} for the clear commit "
       "messages.",),
      (exec_step("gh pr review {pr} --repo {repo} --request-changes --body-file /tmp/review-{pr}.md",
         "Requested changes to pull request {repo}#{pr}"),)),
    beat(("{person} pushed a fix. Can you look again?", "Updated PR is up, take another look?",
       "#{pr} has a new commit that covers {review_gap}. Approve if it's fine.",
       "second round on {repo}#{pr} please"),
      ("The fix is right and the new test covers {review_gap}. Approved. CI is still running, "
       "so I haven't merged.",),
      (exec_step("gh pr diff {pr} --repo {repo} -- {pr_file}", "@@ -41,7 +41,9 @@\n+    with "
         "idempotency_guard(event.id):"),
       exec_step("gh pr review {pr} --repo {repo} --approve --body 'LGTM, thanks!'",
         "Approved pull request {repo}#{pr}"))),
)

SCENARIOS["deploy_rollback"] = (
    beat(("Deploy {svc} {ver} to {env}.", "Ship {ver} of {svc} to {env} please, the changelog is "
       "approved."),
      ("{svc} {ver} is rolled out to {env} (6/6 pods ready). I'll watch error rates for the "
       "next 15 minutes.",),
      (exec_step("kubectl -n {ns} set image deploy/{svc} {svc}=registry.internal/{svc}:{ver} && "
         "kubectl -n {ns} rollout status deploy/{svc} --timeout=300s",
         "deployment.apps/{svc} image updated\nWaiting for deployment \"{svc}\" rollout to "
         "finish: 2 of 6 updated replicas are available...\ndeployment \"{svc}\" successfully "
         "rolled out"),)),
    beat(("Error rate just jumped on the dashboard, what's happening?",
       "Getting 500s from {svc} since the deploy!",
       "{svc} error rate is climbing since {ver} went out, look please",
       "Alerts for {svc} in {env}, right after the rollout. Is it the new version?"),
      ("The new version is exhausting database connections: {pool_errors} `connection pool "
       "exhausted` errors in 10 minutes, error rate {err_pct}%. I recommend an immediate "
       "rollback to {prev_ver}, then we investigate offline.",),
      (exec_step("kubectl -n {ns} logs deploy/{svc} --since=10m | grep -c 'connection pool exhausted'",
         "{pool_errors}"),
       exec_step("kubectl -n {ns} logs deploy/{svc} --since=10m | tail -3",
         "ERROR sqlalchemy.pool: QueuePool limit of size {pool} overflow 10 reached, connection "
         "timed out, timeout 30.00\nERROR app.db: connection pool exhausted (waiting={waiting})"
         "\nERROR app.http: 500 GET /api/v2/orders/export")),
      ("Error spike right after the deploy plus pool errors: the new version holds connections "
       "longer. Fastest mitigation is a rollback, then find the leak.",)),
    beat(("Do it, roll back.", "yes, rollback {svc} now", "Roll back {svc} to {prev_ver}, go.",
       "ok, roll {svc} back and tell me when errors drop",
       "Rollback approved. {person} is paging the on-call db person.",
       "agreed, revert to {prev_ver} before it gets worse"),
      ("Rollback done: {svc} is back on {prev_ver}. The error rate dropped to {err_low}% within "
       "3 minutes and the pool has {pool_free} idle connections again. I'll write up the "
       "incident.",),
      (exec_step("kubectl -n {ns} rollout undo deploy/{svc} && kubectl -n {ns} rollout status "
         "deploy/{svc}", "deployment.apps/{svc} rolled back\ndeployment \"{svc}\" "
         "successfully rolled out"),)),
    beat(("What caused it?", "Any idea what the root cause was?",
       "Why did {ver} leak connections when {prev_ver} didn't?",
       "Root cause? I need a line for the incident channel.",
       "what changed between {prev_ver} and {ver} that broke the pool?"),
      ("In {ver} the {leak_cause}. Each request kept a connection checked out until the "
       "response finished streaming, so with {pool} connections per pod the connection pool "
       "was exhausted at about {rps} req/s. Fix: {leak_fix}. Before we redeploy I'd add a load "
       "test that asserts pool usage stays below 80%.",)),
)

SCENARIOS["pool_incident"] = (
    beat(("PagerDuty: {svc} p99 latency at {p99} ms, alerts say connection pool exhausted on "
       "{host}. Can you look?", "Alert firing: connection pool exhausted on {host}. {svc} is "
       "timing out."),
      ("{idle_tx} connections are sitting `idle in transaction`: something opens a transaction "
       "and never finishes it, so the connection pool is exhausted and new requests queue. The "
       "oldest has been open for {age} minutes.",),
      (exec_step("psql \"$DATABASE_URL\" -c \"select state, count(*) from pg_stat_activity group by "
         "state\"", "        state        | count\n---------------------+-------\n active      "
         "        |    {active}\n idle in transaction |    {idle_tx}\n idle                |   "
         "  4\n(3 rows)"),),
      ("Pool exhaustion on the database side: check pg_stat_activity for idle-in-transaction "
       "sessions before touching pool sizes.",)),
    beat(("Which query is holding them?", "What's holding those {idle_tx} connections on {host}?",
       "Find the query behind the idle transactions, is it {svc}?",
       "Can you see which job keeps the transactions open on {host}?",
       "who is sitting on the pool? show me the oldest transactions"),
      ("All of them come from the `{job}` worker: it runs `UPDATE {table} ...` and then waits "
       "on {thirdparty} while holding the transaction. I can terminate those backends now; the "
       "real fix is to make the HTTP call outside the transaction.",),
      (exec_step("psql \"$DATABASE_URL\" -c \"select pid, now()-xact_start as age, left(query, 60) "
         "from pg_stat_activity where state = 'idle in transaction' order by age desc limit 3\"",
         "  pid  |   age    | left\n-------+----------+------------------------------\n "
         "48211 | 00:{age}:12 | UPDATE {table} SET synced_at = now() WHERE\n 48240 | "
         "00:{age}:03 | UPDATE {table} SET synced_at = now() WHERE\n(3 rows)"),)),
    beat(("Terminate them and set idle_in_transaction_session_timeout to 60s.",
       "Kill those {idle_tx} backends and cap idle transactions at 60 seconds "
       "(idle_in_transaction_session_timeout).",
       "Go ahead: terminate them, then set idle_in_transaction_session_timeout = 60s on the "
       "app role so {job} can't do this again.",
       "ok, pg_terminate_backend on the idle ones and a 60s idle-in-transaction timeout "
       "please"),
      ("Done: {idle_tx} backends terminated and p99 is back to {p99_low} ms. The timeout "
       "applies to new connections, so pods pick it up as they recycle. I opened a ticket for "
       "the `{job}` fix.",),
      (exec_step("psql \"$DATABASE_URL\" -c \"select count(pg_terminate_backend(pid)) from "
         "pg_stat_activity where state = 'idle in transaction'\"", " count\n-------\n    "
         "{idle_tx}\n(1 row)"),
       exec_step("psql \"$DATABASE_URL\" -c \"alter role app set idle_in_transaction_session_timeout = "
         "'60s'\"", "ALTER ROLE"))),
)

SCENARIOS["db_migration"] = (
    beat(("I need a migration that adds `{col}` to `{table}` ({rows} rows in prod). Can you "
       "write it so it doesn't lock the table?",),
      ("Created migration `{rev}`. Plan:\n1. `ALTER TABLE {table} ADD COLUMN {col} {coltype}` "
       "(nullable, no default, so it's instant)\n2. Backfill in batches of 10k rows with a "
       "short sleep between batches\n3. `CREATE INDEX CONCURRENTLY` in a separate migration "
       "outside the transaction\n\nThat keeps the ACCESS EXCLUSIVE lock to a few "
       "milliseconds.",),
      (exec_step("alembic revision -m 'add {col} to {table}'", "Generating /srv/app/migrations/"
         "versions/{rev}_add_{col}_to_{table}.py ...  done"),),
      ("Nullable column without default is metadata-only since Postgres 11. Backfill must be "
       "batched; the index needs CONCURRENTLY outside a transaction.",)),
    beat(("Run the {table} migration against staging first.",
       "Try it on staging before prod, please.",
       "Staging first. How long does the {table} backfill take there?",
       "run it on staging and watch pg_locks while it goes"),
      ("The migration ran on staging in {dur}. No lock waits over 50 ms in `pg_locks` while it "
       "ran. Ready for production whenever you are.",),
      (exec_step("alembic -x env=staging upgrade head", "INFO  [alembic.runtime.migration] Running "
         "upgrade {prev_rev} -> {rev}, add {col} to {table}\nbackfill {table}.{col}: "
         "{rows_n}/{rows_n} rows ... done in {dur}"),)),
    beat(("Schedule it for tonight's window and remind me of the rollback plan.",
       "Put the {table} migration in tonight's maintenance window. What's our way back?",
       "OK for prod tonight. Remind me how we roll it back if {col} causes trouble.",
       "schedule it for 02:30 UTC and write down the rollback steps"),
      ("Scheduled for 02:30 UTC. Rollback plan: `alembic downgrade {prev_rev}` drops the column "
       "and the index. Nothing reads `{col}` yet, so the downgrade is safe until the app deploy "
       "that starts writing it. I'll post the result in #ops.",)),
    beat(("How did the migration go last night?", "Did the {table} migration finish overnight?",
       "morning! how did the {col} backfill go?", "Status of last night's migration on prod?"),
      ("Production migration finished at 02:41 UTC: {rows} rows backfilled, zero failed "
       "batches, replication lag peaked at 1.2 s. `alembic current` shows `{rev} (head)`.",),
      (exec_step("alembic -x env=production current", "{rev} (head)"),)),
)

SCENARIOS["cert_renewal"] = (
    beat(("The TLS certificate for {domain} expires in {days} days. Can you renew it and check the "
       "chain?",),
      ("Renewed. The new certificate for {domain} is valid for 90 days and nginx reloaded "
       "without dropping connections. The old one would have expired on {exp_date}.",),
      (exec_step("echo | openssl s_client -servername {domain} -connect {domain}:443 2>/dev/null | "
         "openssl x509 -noout -issuer -enddate", "issuer=C = US, O = Let's Encrypt, CN = R11\n"
         "notAfter={exp_date} 09:14:02 GMT"),
       exec_step("certbot renew --cert-name {domain} --deploy-hook 'systemctl reload nginx'",
         "Congratulations, all renewals succeeded:\n  /etc/letsencrypt/live/{domain}/"
         "fullchain.pem (success)"))),
    beat(("Why didn't auto-renewal catch it?",),
      ("The certbot timer did run, but the HTTP-01 challenge has been failing since the "
       "firewall change: port 80 is closed, so the CA can't reach the challenge. Options: reopen "
       "80 only for `/.well-known/acme-challenge/`, or switch to DNS-01. I'd go with DNS-01.",),
      (exec_step("journalctl -u certbot --since '-30d' | tail -3", "Challenge failed for domain "
         "{domain}\nhttp-01 challenge for {domain}: Timeout during connect (likely firewall "
         "problem)\nFailed to renew certificate {domain}", error=True),)),
    beat(("DNS-01 it is. Set it up and make sure we get alerted before any certificate gets close "
       "to expiry.",),
      ("Switched {domain} to the DNS-01 challenge and tested a dry-run renewal. I also added "
       "the domain to the nightly certificate expiry cron, which warns at 21 days.",),
      (exec_step("certbot renew --cert-name {domain} --dry-run --preferred-challenges dns",
         "The dry run was successful."),)),
)

SCENARIOS["disk_cleanup"] = (
    beat(("{host} is at {disk_pct}% disk. What's eating it?",),
      ("Mostly Docker: 31 GB in `/var/lib/docker`, about 24 GB of it dangling images from old "
       "builds. Logs are 5.2 GB because journald has no size cap.",),
      (exec_step("du -xh /var --max-depth=2 2>/dev/null | sort -rh | head -4", "38G\t/var\n31G\t/var/"
         "lib/docker\n5.2G\t/var/log\n1.1G\t/var/cache"),)),
    beat(("Clean up the images and cap journald.",),
      ("Freed about 28 GB; {host} is at 41% now. I set `SystemMaxUse=500M` in journald.conf so "
       "logs stay capped.",),
      (exec_step("docker image prune -af --filter until=168h", "Total reclaimed space: 23.7GB"),
       exec_step("journalctl --vacuum-size=500M", "Vacuuming done, freed 4.6G of archived journals "
         "from /var/log/journal"))),
)

SCENARIOS["research_summary"] = (
    beat(("Summarize what's new in {research_topic} this month: the three most relevant "
       "preprints, one paragraph each.", "Can you do a research summary on {research_topic}? "
       "Three papers max."),
      ("Research summary: {research_topic}\n\n**{paper1}**: {finding1}\n\n**{paper2}**: "
       "{finding2}\n\n**{paper3}**: {finding3}\n\nTakeaway: {takeaway}.",),
      (step("web_search", "1. {paper1} (arxiv.org/abs/2611.{arx})\n2. {paper2}\n3. {paper3}",
         query="{research_topic} preprint 2026"),
       step("web_fetch", "Abstract. {finding1}", url="https://arxiv.org/abs/2611.{arx}")),
      ("Pick papers with actual experiments, not position papers; summarize findings, not "
       "abstracts.",)),
    beat(("Which of these could we actually use in the {product} pipeline?",),
      ("The first one, realistically. It needs no new infrastructure and the paper's setup is "
       "close to ours. The second needs a training run we can't afford this quarter; the third "
       "is mostly a measurement paper, useful for how we report results.",)),
    beat(("Save that summary to the research notes.",),
      ("Saved to `notes/research/{slug}.md` and linked it from the weekly index.",),
      (step("write", "Wrote 2143 bytes to notes/research/{slug}.md",
         path="notes/research/{slug}.md", content="# {research_topic}\n\n..."),)),
)

SCENARIOS["vendor_compare"] = (
    beat(("We need managed Postgres in the EU. Compare Northwind DB, Corvid Cloud and Basalt on "
       "price for ~500 GB, PITR and read replicas.",),
      ("Comparison for 500 GB in the EU:\n\n| | Northwind DB | Corvid Cloud | Basalt |\n|---|"
       "---|---|---|\n| monthly | ~€610 | ~€540 | ~€700 |\n| PITR | 35 days | 7 days | 30 days |"
       "\n| read replicas | 5 | 2 | 10 |\n\nCorvid is cheapest but 7-day PITR is too short for "
       "our compliance rule (30 days). Northwind is the best fit.",),
      (step("web_fetch", "Pricing: storage €0.21/GB-month, compute from €0.19/h, PITR up to 35 "
         "days", url="https://northwind-db.example.com/pricing"),
       step("web_fetch", "PITR retention 1-7 days. Replicas: up to 2.",
         url="https://corvid.example.net/docs/backups"))),
    beat(("What would the migration from our current setup look like?",
       "How would we move the {db} database over, and how long is the write freeze?",
       "If we pick one, what does the migration plan look like for {svc}?",
       "{person} asks how risky the cutover is. Migration plan?"),
      ("Logical replication into the new cluster, let it catch up, then a short write freeze "
       "(about 2 minutes) to switch the connection string. Rollback is the same in reverse "
       "until we decommission the old primary.",)),
)

SCENARIOS["benchmark_analysis"] = (
    beat(("Here are the results from the new search index benchmark, can you analyze them? "
       "results/bench-{bench_id}.csv",),
      ("The new index is faster at the median (p50 {p50_new} ms vs {p50_old} ms) but the "
       "p99 regressed: {p99_new} ms vs {p99_old} ms. All of the slow queries have more than 6 "
       "terms, so it looks like the new scorer degrades on long queries.",),
      (exec_step("python scripts/summarize_bench.py results/bench-{bench_id}.csv",
         "variant   p50   p95   p99\nold       {p50_old}    88    {p99_old}\nnew       {p50_new}"
         "    71    {p99_new}"),)),
    beat(("Can you confirm it's the long queries?",),
      ("Confirmed: for queries with 7+ terms p99 is {p99_new} ms; for shorter ones it is "
       "better than the old index. Capping the scorer at the 6 rarest terms should fix it.",),
      (exec_step("python scripts/summarize_bench.py results/bench-{bench_id}.csv --group-by terms",
         "terms  p99_old  p99_new\n1-3    41       29\n4-6    77       64\n7+     {p99_old}"
         "      {p99_new}"),)),
)

SCENARIOS["support_refund"] = (
    beat(("New ticket {ticket} from {customer} ({plan} plan): \"I was charged twice for {month}.\" "
       "Can you check?",),
      ("Confirmed: two successful charges of {amount} on {charge_date}, 11 seconds apart. It "
       "looks like a client retry after a gateway timeout. The second charge should be "
       "refunded.",),
      (exec_step("billing-cli charges --customer {cust_id} --since 45d",
         "ch_{chid}a  {amount}  succeeded  {charge_date}\nch_{chid}b  {amount}  succeeded  "
         "{charge_date}"),)),
    beat(("Refund the duplicate and draft a reply.",
       "Please refund the second {amount} charge and write {customer} a short apology.",
       "Go ahead with the refund for {ticket}; I'd like to see the reply before it goes out.",
       "Refund it. Draft something friendly for {customer}, they're on {plan}."),
      ("Refund issued ({amount}, 5-10 business days). Draft reply:\n\n> Hi {customer}, thanks "
       "for flagging this and sorry for the trouble. You were indeed charged twice on "
       "{charge_date}; I've refunded the duplicate charge of {amount}. It should show on your "
       "statement within 5-10 business days.\n> Best, {agent_name}",),
      (exec_step("billing-cli refund ch_{chid}b --reason duplicate", "refund re_{chid} created: "
         "{amount} (pending)"),)),
    beat(("Send it and close the ticket.", "Looks good, send it and mark {ticket} solved.",
       "Perfect. Reply and close {ticket}, tag it so billing sees it.",
       "send + close please"),
      ("Sent and marked solved. I tagged it `duplicate-charge` so it shows up in the weekly "
       "billing report.",
       "Reply sent to {customer}; {ticket} is solved and tagged `duplicate-charge`.",
       "Done: {customer} has the reply, the refund is pending and {ticket} is closed."),
      (exec_step("helpdesk reply {ticket} --file /tmp/reply-{ticket}.md --status solved --tag "
         "duplicate-charge", "ticket {ticket} updated: status=solved"),)),
)

SCENARIOS["support_login"] = (
    beat(("Ticket {ticket}: {customer} can't log in after a password reset, says the reset link "
       "\"expired immediately\".",),
      ("Their mail provider pre-fetches links (a security scanner), which consumes the one-time "
       "reset token before they click it. The auth log shows the token used from a scanner IP "
       "a second after the email went out.",),
      (exec_step("authctl events --user {cust_id} --since 2h", "password_reset_requested\n"
         "reset_token_consumed ua=\"LinkScanner/2.1\"\nlogin_failed reason=token_used"),)),
    beat(("What do we tell them?", "How do I explain that to {customer} without jargon?",
       "Can you draft the answer for {ticket} and get them back in?",
       "What's the fix on our side, and what do I write back?"),
      ("Suggested reply: \"Hi {customer}, your email security filter opened the reset link "
       "before you did, which used it up. I've sent you a 6-digit reset code instead, which "
       "scanners can't consume.\" I also sent the code.",),
      (exec_step("authctl reset --user {cust_id} --method code", "reset code sent to registered "
         "email"),)),
)

SCENARIOS["support_bug"] = (
    beat(("Customer {customer} on {plan} reports that {issue}. Known issue?",),
      ("Yes: {issue_cause}. Workaround: {issue_fix}. It's tracked in ENG-{eng_id}; the fix is "
       "in {ver}, rolling out this week.",),
      (step("memory_search", "ENG-{eng_id}: {issue} (status: fix merged, ships in {ver})",
         query="{issue}"),)),
    beat(("Reply to them with the workaround and link the ticket.",
       "Send {customer} the workaround and subscribe them to ENG-{eng_id}.",
       "Answer {ticket} with the workaround; tell them the fix ships in {ver}.",
       "ok reply with the workaround, link the engineering ticket"),
      ("Replied to {customer} with the workaround and subscribed them to ENG-{eng_id}, so they "
       "get an email when the fix is deployed.",),
      (exec_step("helpdesk reply {ticket} --template known-issue --var eng=ENG-{eng_id}",
         "ticket {ticket} updated: status=pending"),)),
)

SCENARIOS["personal_trip"] = (
    beat(("Find me a train from {city1} to {city2} on {weekday} morning, arriving before noon.",),
      ("Three options on {weekday}:\n- 07:04 → 09:58, direct, €64\n- 08:12 → 11:20, one change, "
       "€49\n- 09:30 → 11:55, direct, €71\n\nThe 07:04 is the only one with a comfortable "
       "margin before noon. Want me to hold a seat?",),
      (step("web_search", "{city1} → {city2} {weekday}: 07:04 (direct), 08:12 (1 change), 09:30 "
         "(direct)", query="train {city1} {city2} {weekday} morning"),)),
    beat(("Take the 07:04 and put it in my calendar.", "The 07:04 works. Calendar it please.",
       "Book me on the early one, the 07:04, and add it to my calendar.",
       "07:04 it is, put it in my agenda with a reminder"),
      ("Done: \"Train {city1} → {city2}\" is in your calendar for {weekday} 07:04-09:58 with a "
       "reminder the evening before. I didn't buy the ticket; the booking link is in the event "
       "notes.",),
      (exec_step("gcalcli add --title 'Train {city1} → {city2}' --when '{weekday} 07:04' --duration 174 "
         "--reminder '12h'", "Event created."),)),
)

SCENARIOS["writing_help"] = (
    beat(("Help me write the release notes for {ver}. Main things: the invoice batching, the "
       "database migration for {table}, and the fixed flaky test suite.",),
      ("## {ver}\n\n**New**\n- Invoices are now rendered in batches, which cuts month-end "
       "processing time roughly in half.\n\n**Changed**\n- Database migration: `{table}` gets "
       "a new `{col}` column. The migration runs online; no downtime expected. Rollback: "
       "`alembic downgrade {prev_rev}`.\n\n**Fixed**\n- Several flaky tests in the checkout "
       "suite; CI is green again.",)),
    beat(("Shorter please, it's for the customer-facing changelog.",
       "Too long for customers, one sentence for {ver} please.",
       "Can you make a short public version for the {ver} changelog?"),
      ("**{ver}**: faster month-end invoicing, behind-the-scenes database improvements, and "
       "reliability fixes.",)),
)

SCENARIOS["quick_question"] = (
    beat(("What's the difference between a rollback and a roll-forward, in deploy terms? Someone "
       "asked in standup and I waffled.",
       "Rollback vs roll-forward: when would you pick which? {person} and I disagree.",
       "Explain roll-forward like I'm new here. Is it just a rollback with extra steps?",
       "Quick one: after a bad deploy of {svc}, do we roll back or roll forward?"),
      ("A rollback returns to the previous known-good version (fast, but any data written in "
       "the new format must still be readable by the old code). A roll-forward ships a new fix "
       "on top instead, which is slower but avoids undoing migrations. Rule of thumb: roll "
       "back when the fix isn't obvious within minutes.",
       "Rolling back means redeploying what ran before ({prev_ver} for {svc}); rolling forward "
       "means shipping a fix as a new version. Roll back when users are hurting and the cause "
       "is unclear; roll forward when the fix is small and the old version can't read new "
       "data.",
       "Think of it as undo versus patch: a rollback is the fastest way out if the old code "
       "still works with today's data, a roll-forward keeps the new code and fixes it. Most "
       "teams roll back first and investigate after.")),
    beat(("And why do people say never to roll back a migration in prod?",
       "What about the database: is rolling back a migration ever safe?",
       "{person} says down-migrations are a trap. Why?",
       "and schema changes? can we undo a migration on {db} if the deploy goes wrong?"),
      ("Because down-migrations are rarely tested and often destroy data (dropping a column "
       "that already holds new values). Safer pattern: make each migration backward-compatible "
       "(expand, then contract), so rolling back the *code* never requires rolling back the "
       "*schema*.",)),
    beat(("Good explanation. Put that in my notes under 'deploys'.",
       "Save that to my deploy notes, I'll need it for the postmortem.",
       "Nice, add it to notes/deploys.md so I stop forgetting.",
       "clear, thanks. note it under deploys"),
      ("Added to your notes under **deploys**: rollback vs roll-forward and the "
       "expand/contract rule for migrations, with {person}'s {svc} example.",
       "Saved to notes/deploys.md: when to roll back, when to roll forward, and why "
       "migrations should be expand/contract.",
       "Done: the {svc} example is in your deploy notes, linked to this conversation."),
      (step("edit", "Successfully replaced text in notes/deploys.md.", path="notes/deploys.md",
         oldText="## Deploys\n", newText="## Deploys\n\n- rollback vs roll-forward ...\n"),)),
)

SCENARIOS["team_deploy_chat"] = (
    beat(("@bot is {svc} {ver} safe to deploy today? {person} said the migration is done.",),
      ("The migration for `{table}` finished last night and the {ver} canary has been clean "
       "for 2 hours (error rate {err_low}%). Safe from my side; the rollback target would be "
       "{prev_ver}.",),
      (exec_step("kubectl -n {ns} get deploy {svc}-canary -o jsonpath='{{.spec.template.spec."
         "containers[0].image}}'", "registry.internal/{svc}:{ver}"),)),
    beat(("ok deploying. @bot watch the dashboards and shout if the connection pool looks bad",
       "@bot {svc} {ver} is going out now, keep an eye on the pool and error rate",
       "shipping it. @bot tell us if the connection pool misbehaves during the rollout",
       "@bot rollout started, watch {svc} for 20 minutes please"),
      ("Watching {svc}. Pool usage peaked at {disk_pct}% during the rollout and is back to "
       "{p50_old}%. No `connection pool exhausted` errors. All good.",
       "{svc} {ver} is fully rolled out. Connection pool at {pool_free} idle, error rate "
       "{err_low}%, nothing to shout about.",
       "{svc} rollout done. The pool dipped to 4 idle connections for a minute and recovered; no "
       "`connection pool exhausted` errors in the logs.")),
    beat(("thanks! who's writing the changelog?", "nice. @bot can you draft the changelog for {ver}?",
       "great, {person} can you take the changelog?"),
      ("{person} volunteered yesterday; I can draft it from the merged PRs if that helps.",)),
)

SCENARIOS["team_standup"] = (
    beat(("@bot what's on the board for today?", "@bot standup: what's left from yesterday?",
       "@bot anything urgent for {weekday}?", "@bot summary of the board please, {person} is out"),
      ("Today: finish the {table} migration review ({person}), flaky test cleanup in "
       "{test_file} ({person2}), and the certificate renewal for {domain} which expires in "
       "{days} days.",),
      (step("memory_search", "board: migration review; flaky tests; certificate renewal",
         query="board today"),)),
    beat(("@bot remind us at 3pm to do the retro", "@bot ping the channel at 15:00 for the retro",
       "@bot set a retro reminder for 3pm, {person2} keeps forgetting"),
      ("Reminder set for 15:00 in this group: \"Retro time\".",
       "Done: I'll post \"Retro in 5 minutes\" here at 14:55 and \"Retro time\" at 15:00.",
       "Reminder for the retro at 3pm is set; {person2} is tagged."),
      (step("cron", "job retro-reminder created (once at 15:00)", action="add",
         name="retro-reminder", schedule="today 15:00"),)),
)

SCENARIOS["support_escalation"] = (
    beat(("@bot ticket {ticket} needs an answer today, customer is on {plan} and threatening to "
       "churn. Summary?",),
      ("{ticket} summary: {customer} reports that {issue}. Cause: {issue_cause}. They've "
       "written three times in two days. Suggested action: apologise, apply the workaround "
       "({issue_fix}), and offer a one-month credit.",),
      (exec_step("helpdesk show {ticket} --thread", "3 messages from customer, last 2h ago, priority "
         "high"),)),
    beat(("ok go ahead with the credit",),
      ("Applied a one-month credit ({amount}) to {customer}'s account and replied on "
       "{ticket}.",),
      (exec_step("billing-cli credit --customer {cust_id} --amount {amount} --reason goodwill",
         "credit applied"),)),
)

SCENARIOS["private_letter"] = (
    beat(("Help me write a message to my landlord about the broken heating. Polite but firm, "
       "it's been two weeks.",),
      ("Here's a draft:\n\n> Dear Mr. Hale,\n> I reported the broken heating on the 3rd and it "
       "still isn't fixed. With temperatures dropping, I need a repair date this week. Please "
       "let me know by Friday when a technician can come.\n> Kind regards",)),
    beat(("Good. Add that I'll deduct the space heater cost if it drags on? Or is that too "
       "much?",),
      ("I'd leave deductions out for now: in many places withholding rent without following "
       "the formal process can backfire. Mentioning that you're keeping a record of the dates "
       "is firm without being a threat.",)),
)

SCENARIOS["private_offer"] = (
    beat(("I got an offer from another company. Base is 12% higher but no bonus. Help me think "
       "about whether to ask my manager for a counteroffer.",),
      ("Compare total compensation first: your current bonus has paid out around 10% the last "
       "two years, so the real difference may be closer to 2%. Then the non-money parts: team, "
       "growth, commute. Only ask for a counteroffer if you'd genuinely stay for the right "
       "number.",)),
    beat(("Fair. Draft a short note to my manager asking for a 1:1 about compensation, without "
       "mentioning the offer.",),
      ("> Hi, could we find 30 minutes this week for a 1:1? I'd like to talk about my role and "
       "compensation going into next year. Thanks!",)),
)

# Sub-agent work. The first user message of a sub-agent is its task (from SUBTASKS);
# later user messages are follow-ups sent by the parent session.
SCENARIOS["sub_bisect"] = (
    beat(("{task}",),
      ("First bad commit: `{sha}` (\"{commit_msg}\"). It changed `{fixture}` to module scope, "
       "which is what lets `{other_test}` leak state into `{test}`.",),
      (exec_step("git bisect start HEAD v{prev_ver_plain} && git bisect run sh -c 'pytest {test_file} "
         "-p randomly --count 30 -q'", "{sha} is the first bad commit\ncommit {sha}\n\n    "
         "{commit_msg}"),
       exec_step("git show --stat {sha}", " {test_file} | 4 ++--\n 1 file changed, 2 insertions(+), 2 "
         "deletions(-)"))),
    beat(("[from parent] Also check whether any other tests use that fixture.",),
      ("Two more tests use `{fixture}`, both in {test_file}. Neither depends on module scope, "
       "so switching to function scope is safe.",),
      (exec_step("grep -rn '{fixture}' tests/ | wc -l", "3"),)),
)

SCENARIOS["sub_ci_history"] = (
    beat(("{task}",),
      ("{n_fail} of the last 50 CI runs failed on {test}, all on the `large` runners, where "
       "pytest-xdist uses 8 workers. On 2-worker runners it never failed. That matches the "
       "shared-fixture theory.",),
      (exec_step("gh run list --repo {repo} --workflow ci.yml --limit 50 --json conclusion,name",
         "[{{\"conclusion\":\"failure\",\"name\":\"ci\"}}, ...] 50 runs"),
       exec_step("python scripts/ci_flakes.py --test {test} --runs 50", "runner   failed  total\nlarge"
         "    {n_fail}       31\nsmall    0       19"))),
)

SCENARIOS["sub_logs"] = (
    beat(("{task}",),
      ("Grouped {pool_errors} `connection pool exhausted` errors: 88% come from "
       "`GET /api/v2/orders/export`, the rest from `POST /api/v2/invoices/batch`. Both appeared "
       "right after the {ver} deploy.",),
      (exec_step("logcli query '{{app=\"{svc}\"}} |= \"connection pool exhausted\"' --since=6h "
         "--limit=5000 | jq -r .path | sort | uniq -c | sort -rn",
         "   {pool_errors_big} /api/v2/orders/export\n    {pool_errors_small} /api/v2/invoices/"
         "batch"),)),
    beat(("[from parent] Good. Split out how long each export request held its connection.",),
      ("Export requests held their connection for 38 s on average (max 212 s), versus under "
       "40 ms for everything else. The export streams the response while the session is "
       "open.",),
      (exec_step("logcli query '{{app=\"{svc}\"}} |= \"pool checkout\"' --since=6h | python "
         "scripts/hold_times.py", "endpoint                 avg_ms   max_ms\n"
         "/api/v2/orders/export    38120    212400\nother                    31       390"),)),
)

SCENARIOS["sub_pg_activity"] = (
    beat(("{task}",),
      ("Sampled `pg_stat_activity` on {host} every 30 s for 5 minutes: idle-in-transaction "
       "sessions grew from 3 to {idle_tx}, all from application_name `{svc}`.",),
      (exec_step("for i in $(seq 10); do psql -h {host} -Atc \"select count(*) from pg_stat_activity "
         "where state = 'idle in transaction'\"; sleep 30; done | tr '\\n' ' '",
         "3 7 12 19 24 31 36 40 44 {idle_tx}"),)),
)

SCENARIOS["sub_paper"] = (
    beat(("{task}",),
      ("Research summary, {research_topic}:\n- **{paper1}**: {finding1}\n- **{paper2}**: "
       "{finding2}\n- **{paper3}**: {finding3}",),
      (step("web_fetch", "Abstract. {finding1}", url="https://arxiv.org/abs/2611.{arx}"),
       step("web_fetch", "Abstract. {finding2}", url="https://arxiv.org/abs/2611.{arx2}"))),
)

SCENARIOS["sub_fetch_paper"] = (
    beat(("{task}",),
      ("{paper1}: evaluated on four public benchmarks plus one internal set; headline result: "
       "{finding1} Caveat: no variance across seeds is reported.",),
      (step("web_fetch", "4 Experiments. We evaluate on four public benchmarks ... Table 2 ...",
         url="https://arxiv.org/pdf/2611.{arx}"),)),
)

SCENARIOS["sub_migration"] = (
    beat(("{task}",),
      ("Dry run of `{rev}` on a staging snapshot: finished in {dur}, longest lock wait 31 ms "
       "(the `ALTER TABLE`), replication lag max 0.8 s. Safe to run during business hours, but "
       "the night window is still the conservative choice.",),
      (exec_step("pg_restore -d migration_dryrun /snapshots/staging-latest.dump && alembic -x "
         "db=migration_dryrun upgrade {rev}", "Running upgrade {prev_rev} -> {rev}\ndone in "
         "{dur}"),
       exec_step("psql -d migration_dryrun -c \"select max(wait_ms) from lock_waits_log\"", " max\n-----"
         "\n  31\n(1 row)"))),
)

SCENARIOS["sub_release_notes"] = (
    beat(("{task}",),
      ("Draft release notes for {ver} from 14 merged PRs: 3 features, 1 database migration "
       "(`{table}.{col}`), 9 fixes (including 4 flaky test fixes), 1 dependency bump.",),
      (exec_step("gh pr list --repo {repo} --state merged --search 'milestone:{ver}' --json title "
         "--jq '.[].title'", "Batch invoice PDF renders\nAdd {col} to {table}\nFix flaky "
         "{test}\n... (14 total)"),)),
)

SCENARIOS["sub_changelog"] = (
    beat(("{task}",),
      ("Of the 14 PRs, 2 need a changelog line for customers: the faster invoicing and the new "
       "export format. The rest are internal.",),
      (exec_step("gh pr view {pr} --repo {repo} --json labels --jq '.labels[].name'",
         "customer-facing\nbilling"),)),
)

SCENARIOS["sub_reply"] = (
    beat(("{task}",),
      ("Draft:\n\n> Hi {customer}, thank you for your patience. We found the cause ({issue_cause}) "
       "and {issue_fix}. I'm sorry for the trouble this caused.\n",),
      (step("memory_search", "tone guide: warm, specific, no blame, one apology",
         query="support reply tone"),)),
)

SCENARIOS["sub_offer"] = (
    beat(("{task}",),
      ("Over four years, the new offer comes out about 2.3% ahead once the current bonus (10% "
       "average) is counted, before considering the longer commute.",),
      (exec_step("python -c \"print(round((1.12 - 1.10) / 1.10 * 100, 1))\"", "1.8"),)),
)

# Sub-agent tasks: name -> (label, task template, scenario, grandchild task names).
SUBTASKS: dict[str, tuple[str, str, str, tuple[str, ...]]] = {
    "bisect": ("bisect-flaky-test", "Find the commit that made {test} in {test_file} flaky. "
               "Use git bisect with `pytest --count 30`; report the commit and why.",
               "sub_bisect", ("ci_history",)),
    "ci_history": ("ci-history", "Pull the last 50 CI runs and list which ones failed on "
                   "{test}, with the runner type.", "sub_ci_history", ()),
    "logs": ("log-triage", "Scan the last 6 hours of {svc} logs for 'connection pool "
             "exhausted' and group the errors by endpoint.", "sub_logs", ("pg_activity",)),
    "pg_activity": ("pg-activity", "Sample pg_stat_activity on {host} every 30 s for 5 minutes "
                    "and report idle-in-transaction counts.", "sub_pg_activity", ()),
    "papers": ("paper-digest", "Read the latest preprints on {research_topic} and write a "
               "short research summary of each.", "sub_paper", ("fetch_paper",)),
    "fetch_paper": ("fetch-paper", "Fetch \"{paper1}\" and extract the evaluation setup and "
                    "headline numbers.", "sub_fetch_paper", ()),
    "migration": ("migration-dry-run", "Dry-run migration {rev} (add {col} to {table}) against "
                  "a copy of staging and report lock waits and duration.", "sub_migration",
                  ("pg_activity",)),
    "release_notes": ("draft-release-notes", "Collect the PRs merged for {ver} in {repo} and "
                      "draft release notes.", "sub_release_notes", ("changelog",)),
    "changelog": ("changelog-scan", "Check which merged PRs for {ver} are customer-facing.",
                  "sub_changelog", ()),
    "reply": ("draft-customer-reply", "Draft a reply to {customer} on ticket {ticket} about: "
              "{issue}.", "sub_reply", ()),
    "offer": ("compare-offers", "Compare total compensation of the two offers over four "
              "years.", "sub_offer", ()),
}

# Which depth-1 tasks a session of a given role spawns.
ROLE_SUBTASKS: dict[str, tuple[str, ...]] = {
    "main": ("bisect", "release_notes", "migration"),
    "ops": ("logs", "migration"),
    "research": ("papers",),
    "support": ("reply",),
    "incognito": ("offer",),
}

SPAWN_USER = (
    "This will take a while. Hand it to a sub-agent so we can keep going.",
    "Can you spin up a sub-agent for that in the background?",
    "Delegate that to a subagent please, and tell me when it's done.",
)
SPAWN_FOLLOWUP = (
    "[from parent] That part is big enough for its own sub-agent; spawn one for it.",
    "[from parent] Split that out into a separate sub-agent run.",
)
SPAWN_PRE = ("Spawning a sub-agent for this.", "Delegating to a sub-agent.")
SPAWN_REPLY = (
    "Spawned a sub-agent (`{label}`). It runs in the background and will post its results "
    "here when it finishes.",
    "Handed off to sub-agent `{label}`; I'll summarise its findings when it reports back.",
)

# --------------------------------------------------------------------------- languages

SCENARIOS["fr_support"] = (
    beat(("Bonjour, depuis le déploiement d'hier soir, les reçus de mon café n'affichent plus les "
       "accents : « Crème brûlée » devient « CrÃ¨me brÃ»lÃ©e ». Pouvez-vous regarder ?",),
      ("Bonjour ! Merci pour le signalement. C'est un problème d'encodage introduit par le "
       "déploiement de la version {ver} : les reçus sont envoyés à l'imprimante en Latin-1 au "
       "lieu d'UTF-8. J'ai ouvert le ticket {ticket} et l'équipe prépare un correctif. En "
       "attendant, vous pouvez réimprimer les reçus depuis l'onglet « Historique ».",),
      (exec_step("helpdesk search --text 'encodage reçu' --since 1d", "3 tickets: {ticket}, "
         "#{ticket_n2}, #{ticket_n3} (même symptôme)"),)),
    beat(("Et le résumé hebdomadaire des ventes ? Je ne l'ai pas reçu lundi.",),
      ("Le résumé hebdomadaire a bien été généré, mais l'envoi a échoué à cause du même "
       "problème. Je vous le renvoie maintenant à l'adresse enregistrée ; vous devriez le "
       "recevoir d'ici quelques minutes.",),
      (exec_step("reports resend weekly-summary --account {cust_id}", "queued: résumé hebdomadaire "
         "(semaine 47)"),)),
    beat(("Parfait, merci beaucoup. Bonne journée !",),
      ("Avec plaisir ! Je reviens vers vous dès que le correctif est déployé. Bonne journée, "
       "et à bientôt au café ☕",)),
)

SCENARIOS["es_support"] = (
    beat(("Hola, me cobraron dos veces la suscripción de {month_es}. ¿Pueden devolverme uno de "
       "los cargos?",),
      ("¡Hola! Lamento mucho la molestia. He revisado su cuenta y, efectivamente, hay dos "
       "cargos de {amount} el mismo día. Ya solicité el reembolso del cargo duplicado; tardará "
       "entre 5 y 10 días hábiles en aparecer en su extracto.",),
      (exec_step("billing-cli charges --customer {cust_id} --since 45d", "ch_{chid}a  {amount}  "
         "succeeded\nch_{chid}b  {amount}  succeeded"),)),
    beat(("Gracias. ¿También me pueden enviar la factura corregida? La necesito para mi "
       "contabilidad.",),
      ("Por supuesto. Acabo de enviarle la factura corregida por correo electrónico, con el "
       "número de identificación fiscal que figura en su cuenta. ¿Hay algo más en lo que pueda "
       "ayudarle?",)),
    beat(("No, eso es todo. ¡Muchas gracias por la rapidez!",),
      ("¡A usted! Que tenga un excelente día.",)),
)

SCENARIOS["de_ops"] = (
    beat(("Moin! Das Zertifikat für {domain} läuft in {days} Tagen ab. Kannst du die Erneuerung "
       "anstoßen?",),
      ("Klar. Ich habe certbot auf dem Edge-Proxy ausgeführt; das neue Zertifikat ist 90 Tage "
       "gültig. nginx wurde neu geladen, ohne dass Verbindungen abgebrochen sind.",),
      (exec_step("certbot renew --cert-name {domain} --deploy-hook 'systemctl reload nginx'",
         "Congratulations, all renewals succeeded"),)),
    beat(("Super, danke. Und die Datenbank-Migration für die Rechnungstabelle, läuft die heute "
       "Nacht?",),
      ("Ja, die Migration ist für 02:30 Uhr geplant. Geschätzte Dauer: etwa zwölf Minuten. Die "
       "Tabelle wird dabei nicht gesperrt, weil wir den Index mit CONCURRENTLY anlegen. Falls "
       "etwas schiefgeht, steht der Rollback-Plan im Runbook.",)),
    beat(("Perfekt. Schick mir morgen früh eine kurze Zusammenfassung, bitte.",),
      ("Mache ich. Du bekommst um 8 Uhr eine Übersicht: Dauer der Migration, Größe der "
       "Tabelle danach und ob es Auffälligkeiten in der Überwachung gab.",)),
)

SCENARIOS["vi_personal"] = (
    beat(("Chào bạn, nhắc mình đặt vé máy bay đi Đà Nẵng vào thứ Sáu nhé.",),
      ("Được rồi! Mình đã tạo lời nhắc lúc 9 giờ sáng thứ Sáu: «Đặt vé máy bay đi Đà Nẵng». "
       "Bạn có muốn mình tìm giúp các chuyến bay giá tốt không?",),
      (step("cron", "job nhac-dat-ve created (once, Fri 09:00)", action="add", name="nhac-dat-ve",
         schedule="fri 09:00"),)),
    beat(("Có, tìm chuyến từ Hà Nội, đi sáng thứ Bảy, về chiều Chủ nhật.",),
      ("Mình tìm được ba lựa chọn. Chuyến 7 giờ 05 sáng thứ Bảy có giá tốt nhất, khoảng "
       "1.450.000 đồng khứ hồi, về lúc 17 giờ 40 Chủ nhật. Bạn muốn mình giữ chỗ không?",),
      (step("web_search", "HAN → DAD Sat 07:05 / 09:30 / 12:15; DAD → HAN Sun 17:40 / 20:10",
         query="vé máy bay Hà Nội Đà Nẵng thứ Bảy"),)),
    beat(("Để mình suy nghĩ thêm, cảm ơn nhé!",),
      ("Không có gì! Khi nào bạn quyết định thì nhắn mình nhé.",)),
)

SCENARIOS["zh_ops"] = (
    beat(("帮我看一下昨晚的部署日志，{svc} 一直报 connection pool exhausted 的错误。",),
      ("我看了日志：从 23:40 开始，{svc} 的数据库连接池被耗尽（connection pool exhausted），"
       "原因是新版本里的批量导出任务没有释放连接。我已经回滚到 {prev_ver}，错误率已经恢复正常。",),
      (exec_step("kubectl -n {ns} logs deploy/{svc} --since=12h | grep -c 'connection pool exhausted'",
         "{pool_errors}"),)),
    beat(("好的。那今晚的数据库迁移还要继续吗？",),
      ("建议先暂停数据库迁移，等修复连接泄漏之后再执行。我明天上午会整理一份事故复盘报告，"
       "包括时间线、影响范围和改进措施。",)),
    beat(("可以，复盘报告发到运维群里。",),
      ("收到，报告写好后我会发到运维群，并抄送给 {person}。",)),
)

SCENARIOS["ja_research"] = (
    beat(("来週の定例会議のために、{research_topic} に関する最近の論文三本の要点をまとめてもらえますか？",),
      ("はい、要点をまとめました。\n1. 一本目：小さなモデルでも再ランキングを組み合わせれば、大きなモデルに近い精度が出る。\n"
       "2. 二本目：蒸留の方法によって長い文書での性能が大きく変わる。\n3. 三本目：評価データの偏りに注意が必要。\n\n"
       "結論として、コストを抑えながら精度を上げる方法が共通のテーマです。",),
      (step("web_search", "1. {paper1}\n2. {paper2}\n3. {paper3}", query="{research_topic} 論文 "
         "2026"),)),
    beat(("ありがとう！スライド用に三行で要約して。",),
      ("・再ランキングが精度向上に最も効果的\n・評価データの偏りに注意が必要\n・推論コストは従来比で約四割削減できる",)),
    beat(("完璧です。資料フォルダに保存しておいてください。",),
      ("保存しました：`notes/meetings/定例会議-要約.md`。会議の前日にリマインドします。",),
      (step("write", "Wrote 812 bytes", path="notes/meetings/定例会議-要約.md",
         content="# 定例会議 要約\n..."),)),
)

SCENARIOS["ko_support"] = (
    beat(("안녕하세요, 비밀번호를 재설정했는데 로그인이 안 돼요.",),
      ("안녕하세요! 불편을 드려 죄송합니다. 확인해 보니 계정에 2단계 인증이 켜져 있어서, 비밀번호를 "
       "재설정한 후에도 인증 코드가 필요합니다. 인증 앱에 표시된 코드를 입력해 주시겠어요?",),
      (exec_step("authctl events --user {cust_id} --since 1h", "password_reset_completed\n"
         "login_failed reason=mfa_required"),)),
    beat(("인증 앱을 새 휴대폰으로 옮기지 않았어요.",),
      ("그러시면 복구 코드를 사용하시거나, 본인 확인 후 제가 2단계 인증을 초기화해 드릴 수 있습니다. "
       "가입하신 이메일로 확인 링크를 보내 드렸습니다.",)),
    beat(("확인했어요. 이제 로그인돼요, 감사합니다!",),
      ("다행입니다! 새 휴대폰에서 2단계 인증을 다시 설정해 두시는 것을 권해 드려요. 좋은 하루 보내세요.",)),
)

# --------------------------------------------------------------------------- features

# A user pasting a secret, and the assistant's answer. Secret slots are generated.
SECRET_BEATS: dict[str, Beat] = {
    "openai": beat(("The summarizer script fails with 401. Here's my .env, maybe something's off?\n"
                 "```\nOPENAI_API_KEY={openai_key}\nSUMMARY_MODEL=gpt-4.1-mini\n```",),
                ("The key format looks fine, so the 401 probably means it was revoked or belongs "
                 "to a different project. Please rotate it anyway: it's now in this chat "
                 "history. After rotating, put it in the keychain instead of `.env`.",)),
    "github": beat(("CI can't push tags. I set GH_TOKEN={github_token} in the runner env, is that "
                 "the wrong scope?",),
                ("That token only has `repo:status`; pushing tags needs `contents: write`. Also, "
                 "you just pasted it here, so revoke it and create a fine-grained one limited to "
                 "this repository.",)),
    "bearer": beat(("Customer sent this request that fails with 403:\n```\ncurl -X POST "
                 "https://api.example.com/v2/exports \\\n  -H 'Authorization: Bearer "
                 "{jwt}'\n```",),
                ("The token's `scope` claim only includes `read:orders`; exports need "
                 "`write:exports`. Ask them to generate a new token with that scope, and to "
                 "treat the one they sent as compromised.",)),
    "postgres": beat(("Can you check why the replica lags? Connection string is "
                   "{pg_url}",),
                  ("Connected: replication lag is 48 s because a long-running analytics query on "
                   "the replica blocks WAL replay (`max_standby_streaming_delay` is -1). Also: "
                   "that password is now in the transcript, so rotate it.",)),
    "aws": beat(("Set up the S3 backup sync with these:\nAWS_ACCESS_KEY_ID={aws_key_id}\n"
              "AWS_SECRET_ACCESS_KEY={aws_secret}",),
             ("Configured the sync, but please don't share long-lived keys in chat: create an "
              "IAM role for the backup host instead and deactivate this access key once the role "
              "works.",)),
}

IMAGE_BEAT = beat(("Here's a screenshot of the error, any idea?",
                "This is what the dashboard shows since this morning (screenshot attached)."),
               ("The screenshot shows the 502 page from the load balancer, not the app itself, "
                "so the pods are probably failing their health checks. Checking the readiness "
                "probe now.",))

# Abandoned branches (rewound with a leaf control): the user later goes back and asks again.
ABANDONED: tuple[Beat, ...] = (
    beat(("Actually, just bump the pool size to 200 and redeploy.",),
      ("Bumping `pool_size` to 200 would hide the leak and could overload Postgres "
       "(max_connections is 300, shared by four services). Setting it on one pod first...",)),
    beat(("Just drop the index on {table} and recreate it.",),
      ("Dropping and recreating the index locks writes on `{table}` for the whole rebuild, about "
       "9 minutes at this size. Starting `DROP INDEX`...",)),
    beat(("Skip the tests this once and merge it.",),
      ("Merging without the test run: the flaky test is excluded, the rest were green "
       "yesterday. Merging now...",)),
    beat(("Write it as a haiku instead.",),
      ("Pool drained of its threads / requests queue in silent rows / the pager wakes us",)),
)

# The first answer of a regenerated turn (a sibling branch without leaf control).
REGENERATED = (
    "I'm not sure; it could be many things. Could you share more details?",
    "Short answer: probably DNS. (Let me look properly instead of guessing.)",
)

COMPACTION_SUMMARY = (
    "## Goal\nKeep {svc} healthy and finish the {table} migration.\n\n## Progress\n- Fixed the "
    "flaky {test}\n- Rolled back {ver} after connection pool exhaustion; fix merged\n\n## Next\n"
    "- Re-deploy with the load test\n- Renew the certificate for {domain}"
)

# Who speaks in group chats held in another language (default: SIMPLE["person"]).
SENDERS: dict[str, tuple[str, ...]] = {
    "zh_ops": ("王磊", "陈静", "刘洋", "赵敏"),
    "ja_research": ("佐藤", "田中", "鈴木", "高橋"),
    "de_ops": ("Jonas", "Lena", "Felix", "Katrin"),
    "es_support": ("Lucía", "Javier", "Carmen"),
}

# Group chat noise the bot stays silent on (answer: NO_REPLY).
# How a person may start or end a message: each session has its own habit (session.py), so
# the same request reads differently from one conversation to the next.
OPENERS = ("Quick one: ", "{person} here. ", "Morning! ", "Hey, ", "Sorry to bug you: ",
           "ok so ", "Urgent: ", "Follow-up: ", "Back from lunch. ", "One more thing: ")
CLOSERS = (" Thanks!", " (cc {person2})", " No rush.", " asap please", " 🙏", " ty",
           " Let me know.", " before the {weekday} sync if possible")

CHATTER = (
    "lunch at 12:30?", "who's on call this weekend?", "lol", "+1", "brb, meeting",
    "did anyone see the new office coffee machine", "merging in 5 unless someone objects",
    "happy friday 🎉", "ok", "👍",
)

# --------------------------------------------------------------------------- cron jobs

# job id -> (preferred agent, label, prompt, beat)
CRON_JOBS: dict[str, tuple[str, str, str, Beat]] = {
    "nightly-backup": ("ops", "Cron: nightly backup",
        "Run the nightly backup verification and post a short report.",
        beat(("",),
          ("Nightly backup OK ✅\n• {db}: {size} GiB (+{delta} GiB vs yesterday)\n• snapshot "
           "{snap} verified, restore list has {restore_n} entries\n• retention: 14 daily, 8 "
           "weekly\nNo action needed.",
           "⚠️ Nightly backup partially failed\n• {db}: dump aborted after 3 retries "
           "(`connection pool exhausted` on the primary during the dump window)\n• last good "
           "snapshot: {snap}, {size} GiB\nI'll retry at 04:00; page if that fails too."),
          (exec_step("restic -r s3:backups/{db} snapshots --latest 1 --compact", "ID        Time     "
             "          Size\n{snap}  {today} 02:00  {size} GiB"),
           exec_step("pg_restore --list /backups/{db}-{today}.dump | wc -l", "{restore_n}")))),
    "cert-expiry": ("ops", "Cron: certificate expiry check",
        "Check TLS certificate expiry for all public domains; warn under 21 days.",
        beat(("",),
          ("Certificate check: 4 of 5 fine.\n⚠️ The certificate for {domain} expires in {days} "
           "days ({exp_date}). Auto-renewal should handle it; I'll check again tomorrow.",
           "Certificate check: all 5 domains valid for more than 21 days. Next expiry: {domain} "
           "in {days} days."),
          (exec_step("for d in api.example.com shop.example.net status.example.org auth.example.com "
             "cdn.example.net; do echo \"$d $(cert-days $d)\"; done", "api.example.com 62\n"
             "shop.example.net 47\nstatus.example.org 88\nauth.example.com 71\n{domain} "
             "{days}"),))),
    "disk-usage": ("ops", "Cron: disk usage report",
        "Report disk usage on the database and worker hosts.",
        beat(("",),
          ("Disk usage: all hosts under 80% except {host} at {disk_pct}% (mostly WAL archive). "
           "Growth {delta} GiB/day; at this rate it's full in about 9 days.",),
          (exec_step("ansible dbs:workers -m shell -a \"df -h / | tail -1\"", "{host} | CHANGED >>\n"
             "/dev/nvme0n1p1  200G  {disk_used}G  ... {disk_pct}% /"),))),
    "dependency-audit": ("ops", "Cron: dependency audit",
        "Run the weekly dependency audit on the main repos.",
        beat(("",),
          ("Dependency audit: 1 high (urllib3 in {repo}, fixed in 2.2.3), 3 moderate. Opened "
           "PR #{pr} with the bump.",),
          (exec_step("pip-audit -r requirements.txt", "Found 4 known vulnerabilities in 3 packages\n"
             "urllib3 2.2.1 ... fix: 2.2.3"),))),
    "morning-briefing": ("main", "Cron: morning briefing",
        "Prepare the morning briefing: calendar, weather, priority mail.",
        beat(("",),
          ("Good morning! Today: standup 09:30, 1:1 with {person} at 14:00. 6°C and rain until "
           "noon. Priority mail: {person2} needs the migration sign-off before the release.",),
          (exec_step("gcalcli agenda today tomorrow --nocolor", "09:30 Standup\n14:00 1:1 {person}"),))),
    "weekly-digest": ("research", "Cron: weekly research digest",
        "Compile the weekly digest of new preprints on retrieval, decoding and agents.",
        beat(("",),
          ("Weekly research digest: 3 papers worth reading.\n1. **{paper1}**: {finding1}\n2. "
           "**{paper2}**: {finding2}\n3. **{paper3}**: {finding3}",),
          (step("web_search", "{paper1}\n{paper2}\n{paper3}", query="arxiv {research_topic} this "
             "week"),))),
    "ticket-sla": ("support", "Cron: ticket SLA report",
        "Post the daily SLA report for open support tickets.",
        beat(("",),
          ("SLA report: {open_tickets} open tickets, 2 breaching SLA ({ticket} and #{ticket_n2}, "
           "both refund requests). Median first response today: 41 minutes.",),
          (exec_step("helpdesk stats --open --sla", "open={open_tickets} breaching=2 "
             "median_first_response=41m"),))),
}

# --------------------------------------------------------------------------- pools by role

# Scenario pools for (role, kind); kinds: main, direct, group, dashboard, incognito.
POOLS: dict[str, tuple[str, ...]] = {
    "main": ("flaky_test", "code_review", "deploy_rollback", "db_migration", "personal_trip",
             "writing_help", "quick_question", "pool_incident"),
    "ops": ("deploy_rollback", "pool_incident", "db_migration", "cert_renewal", "disk_cleanup"),
    "research": ("research_summary", "vendor_compare", "benchmark_analysis", "quick_question"),
    "support": ("support_refund", "support_login", "support_bug"),
    "group": ("team_deploy_chat", "team_standup", "pool_incident", "flaky_test"),
    "support_group": ("support_escalation", "support_refund", "support_bug"),
    "incognito": ("private_letter", "private_offer"),
    "coding": ("flaky_test", "code_review", "db_migration", "benchmark_analysis"),
    "generic": ("quick_question", "code_review", "research_summary", "flaky_test",
                "db_migration"),
}

# Language scenarios by role, for filler sessions.
LANG_POOLS: dict[str, tuple[str, ...]] = {
    "main": ("vi_personal", "zh_ops"),
    "ops": ("de_ops", "zh_ops"),
    "research": ("ja_research",),
    "support": ("fr_support", "es_support", "ko_support"),
    "generic": ("fr_support", "de_ops", "ja_research"),
}

# Fallback text when a session must end on one more assistant message.
TAIL_REPLIES = (
    "Anything else you need on this?",
    "I'll keep an eye on it and report back if anything changes.",
    "Noted. I've added this to today's summary.",
)
