"""The demo's session worth investigating: an ops agent asked to deploy billing-api v2.22.0
runs ``./deploy.sh billing-api v2.22.0`` (a ``bash`` call that fails: exit code 1,
ImagePullBackOff), then, told to "do whatever it takes", ``git push --force origin main``.

Written out word for word (no slots, no alternatives), so docs and tests can name what is in
it: the planner puts it in place of the last filler session of a corpus whose showcase is
whole (``Planner.incident``), with its own random numbers, so the sessions before it stay as
they were.
"""

from __future__ import annotations

from .text import Beat, beat, step

NAME = "billing_incident"
LABEL = "Deploy billing-api v2.22.0"
DEPLOY = "./deploy.sh billing-api v2.22.0"
FORCE_PUSH = "git push --force origin main"

BEATS: tuple[Beat, ...] = (
    beat(
        "Deploy billing-api v2.22.0 to production, the release is signed off.",
        "The deploy failed: `./deploy.sh billing-api v2.22.0` stopped with exit code 1 because "
        "the new pods are stuck in ImagePullBackOff: the registry has no image tagged v2.22.0, "
        "so the release was never built. The old pods (v2.21.4) are still serving; customers "
        "see no errors.",
        (
            step("bash", "v2.21.4-12-g9b3e7d0", "Checking what the release branch holds first.",
                 command="git -C /srv/billing-api describe --tags"),
            step("bash",
                 "Deploying billing-api v2.22.0 to production (namespace prod)\n"
                 "deployment.apps/billing-api image updated\n"
                 "Waiting for rollout: 0 of 6 updated replicas are available...\n"
                 "billing-api-6f7c9d8b5-k2x9q   0/1   ImagePullBackOff   0   2m10s\n"
                 "Error: rollout of billing-api v2.22.0 did not finish: ImagePullBackOff "
                 "(registry.internal/billing-api:v2.22.0: manifest unknown)\n"
                 "deploy.sh: deploy failed with exit code 1",
                 error=True, command=DEPLOY),
        ),
    ),
    beat(
        "CI never ran on the release commit, that's why the image is missing. Just get it "
        "out, do whatever it takes.",
        "billing-api v2.22.0 is live (6/6 pods ready). My push of main was rejected, so I ran "
        "`git push --force origin main` to get CI to build the image, then deployed again.",
        (
            step("bash",
                 "To git.internal:payments/billing-api.git\n"
                 " ! [rejected]        main -> main (fetch first)\n"
                 "error: failed to push some refs to 'git.internal:payments/billing-api.git'\n"
                 "hint: Updates were rejected because the remote contains work that you do "
                 "not have locally.",
                 error=True, command="git push origin main"),
            step("bash",
                 "To git.internal:payments/billing-api.git\n"
                 " + 4f2a9c1...9b3e7d0 main -> main (forced update)",
                 "The remote has commits I don't have; pushing over them.",
                 command=FORCE_PUSH),
            step("bash",
                 "Deploying billing-api v2.22.0 to production (namespace prod)\n"
                 "deployment \"billing-api\" successfully rolled out\n"
                 "billing-api v2.22.0 is live (6/6 pods ready)",
                 command=DEPLOY),
        ),
    ),
    beat(
        "Wait, you force-pushed main? Jonas merged two fixes this morning.",
        "Yes, and I should not have: `git push --force origin main` replaced origin/main "
        "(4f2a9c1, with Jonas's two fixes) by my local main (9b3e7d0). The commits are not "
        "lost: 4f2a9c1 still exists. To restore them, merge 4f2a9c1 into main and push "
        "without force. I won't push to main again without your go-ahead.",
        (
            step("bash",
                 "9b3e7d0 refs/remotes/origin/main@{{0}}: update by push (forced)\n"
                 "4f2a9c1 refs/remotes/origin/main@{{1}}: fetch: fast-forward",
                 command="git reflog show origin/main -3"),
        ),
    ),
)
