"""Run and judge: compile and run a spec, compare with the PyTorch reference, give the verdict, write the repro."""
