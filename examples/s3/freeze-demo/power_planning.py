"""Demo stand-in for the power planning code (bound by digest, never executed)."""


def plan_command():
    return "prereg s3-verifier-freeze power-plan"
