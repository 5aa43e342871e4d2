/** Mixed-precision training: dynamic loss scaling (the optimizers' master weights are in ../optim). */
export { GradScaler, type GradScalerOptions, type GradScalerState } from "./grad_scaler.ts";
