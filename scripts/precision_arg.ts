/**
 * The scripts' --precision option: how float32 products may round
 * (setFloat32MatmulPrecision), `fallback` ("highest" unless the script
 * says otherwise) when it is not given; any other name is refused with the
 * script's usage.
 */
import { type Float32MatmulPrecision, float32MatmulPrecisions, setFloat32MatmulPrecision } from "../ts/index.ts";
import { fail, type ParsedArgs } from "./args.ts";

/** Sets the precision --precision names and returns it. */
export function applyPrecisionArg(
  args: ParsedArgs,
  usage: string,
  fallback: Float32MatmulPrecision = "highest",
): Float32MatmulPrecision {
  const precision = args.values.get("--precision") ?? fallback;
  if (!float32MatmulPrecisions.includes(precision as Float32MatmulPrecision)) {
    fail(`--precision must be one of ${float32MatmulPrecisions.join(", ")}, got ${precision}`, usage);
  }
  setFloat32MatmulPrecision(precision as Float32MatmulPrecision);
  return precision as Float32MatmulPrecision;
}
