"""kiln's main job, end to end on a small model: read a model in Relay's text format, optimize it with the
standard pipeline at opt_level 3, run the optimized module, and check it against the unoptimized one.

    python examples/run_model.py [model.relay]
"""

import sys
import time
from pathlib import Path

import numpy as np

import kiln
from kiln import relay
from kiln.relay.testing import random_inputs


def main(path):
    mod = relay.parse(Path(path).read_text(), source_name=str(path))
    print(f"== model {path}\n{mod}")
    main_fn = relay.infer_type(mod)["main"]
    values = random_inputs(main_fn, seed=0)
    # the first parameter is the input; the others are weights, bound as constants so the pipeline folds them
    inputs = values[:1]
    params = {p.name_hint: kiln.nd.array(v) for p, v in zip(main_fn.params[1:], values[1:])}

    start = time.perf_counter()
    with kiln.transform.PassContext(opt_level=3):
        optimized, _ = relay.optimize(mod, params=params)
    print(f"== after the opt_level=3 pipeline ({(time.perf_counter() - start) * 1e3:.1f} ms)\n"
          f"{optimized.astext(show_meta_data=False)}")

    reference = relay.create_executor("debug", mod=mod).evaluate()(*values).numpy()
    result = relay.create_executor("debug", mod=optimized).evaluate()(*inputs).numpy()
    np.testing.assert_allclose(result, reference, rtol=1e-5, atol=1e-6)
    print(f"== output {result.shape} {result.dtype} (matches the unoptimized model)")
    print(np.array2string(result, precision=4, suppress_small=True))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).with_name("mlp.relay"))
