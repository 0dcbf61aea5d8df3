"""Run and judge: compile and run a spec, compare with the PyTorch reference, give the verdict, write the repro;
and the conversion table (cast_*), which judges float constants and conversions code by code."""

# the modules other packages may import (tests/ground/test_layering.py checks it)
__all__ = ["asm_plants_detect", "cast_findings", "cast_fold", "cast_sweep", "cast_table", "compile_task", "crosscheck", "emulate_task", "gpu_pool", "ir_campaign", "judge", "limitations", "llvm_layer", "memory_model", "memory_model_tables", "planted",
           "pool", "repro", "run_task", "specialisation_stats", "ttgir_features"]
