"""The compiler: load a spec safely, validate it, check its semantics, render generated code."""
