// Reductions and softmax (autograd/ops/reduce.cpp).
#include <algorithm>
#include <cmath>

#include "autograd/ops.h"
#include "inputs.h"

namespace ember::samples {

void add_reduce_samples(std::vector<OpInfo>& ops) {
  // Samples for reductions over a trailing or leading dim.
  auto along_dim_samples = [](const Make& make) {
    return [make](Generator& g) -> Samples {
      return {{"2-D", {leaf(make(g, {2, 3}))}},
              {"3-D", {leaf(make(g, {2, 3, 2}))}},
              {"non-contiguous (transposed)", {transposed(make(g, {3, 4}))}},
              {"zero-size", {leaf(make(g, {0, 3}))}}};
    };
  };
  auto reduce = [&ops](std::string name, std::vector<std::string> nodes, std::function<Tensor(const Tensor&)> f,
                       std::function<Samples(Generator&)> samples) {
    // max and min are linear in x given the winners: their backward records its transpose
    const bool picks = std::find(nodes.begin(), nodes.end(), "MaxBackward") != nodes.end();
    ops.push_back({.name = std::move(name),
                   .nodes = std::move(nodes),
                   .grad_nodes = picks ? std::vector<std::string>{"TransposedBackward"} : std::vector<std::string>{},
                   .fn = [f](const Inputs& in) { return f(in[0]); },
                   .samples = std::move(samples)});
  };
  // A full reduction of non-empty inputs (mean/var/max of nothing is undefined).
  auto all_samples = [](const Make& make) {
    return [make](Generator& g) -> Samples {
      return {{"contiguous", {leaf(make(g, {2, 3}))}},
              {"non-contiguous (transposed)", {transposed(make(g, {3, 4}))}},
              {"non-contiguous (stride 2)", {strided(make(g, {5}))}}};
    };
  };

  reduce("sum", {"SumBackward"}, [](const Tensor& x) { return sum(x); },
         [](Generator& g) { return unary_samples(g); });
  reduce("sum_dim", {"SumBackward"}, [](const Tensor& x) { return sum(x, {0}); }, along_dim_samples(normal_values));
  reduce("sum_keepdim", {"SumBackward"}, [](const Tensor& x) { return sum(x, {0, -1}, true); },
         along_dim_samples(normal_values));
  reduce("mean", {"SumBackward"}, [](const Tensor& x) { return mean(x); }, all_samples(normal_values));
  reduce("mean_dim", {"SumBackward"}, [](const Tensor& x) { return mean(x, {-1}); }, along_dim_samples(normal_values));
  reduce("mean_keepdim", {"SumBackward"}, [](const Tensor& x) { return mean(x, {0}, true); },
         along_dim_samples(normal_values));
  reduce("var", {"VarBackward"}, [](const Tensor& x) { return var(x); }, all_samples(normal_values));
  reduce("var_dim", {"VarBackward"}, [](const Tensor& x) { return var(x, {-1}, /*correction=*/0, /*keepdim=*/true); },
         along_dim_samples(normal_values));
  reduce("norm", {"NormBackward"}, [](const Tensor& x) { return norm(x); }, all_samples(normal_values));
  reduce("norm_dim", {"NormBackward"}, [](const Tensor& x) { return norm(x, 2.0, {-1}); },
         along_dim_samples(normal_values));
  reduce("norm_p1", {"NormBackward"}, [](const Tensor& x) { return norm(x, 1.0); }, all_samples(away_from_zero));
  reduce("norm_p3", {"NormBackward"}, [](const Tensor& x) { return norm(x, 3.0, {-1}, true); },
         along_dim_samples(away_from_zero));
  // max |x| (distinct values: at a tie the max is not differentiable)
  reduce("norm_inf", {"NormBackward"}, [](const Tensor& x) { return norm(x, INFINITY, {-1}); },
         along_dim_samples(away_from_zero));
  // A 0-d tensor reduced along "its" dim 0 (PyTorch's rule): itself.
  reduce("sum_0d_dim0", {"SumBackward"}, [](const Tensor& x) { return sum(x, {0}); },
         [](Generator& g) -> Samples { return {{"0-d", {leaf(normal_values(g, {}))}}}; });
  reduce("mean_0d_dim-1", {"SumBackward"}, [](const Tensor& x) { return mean(x, {-1}, true); },
         [](Generator& g) -> Samples { return {{"0-d", {leaf(normal_values(g, {}))}}}; });
  // max(x) is max over the flattened tensor, reshaped to 0-d.
  reduce("max", {"ReshapeBackward", "MaxBackward"}, [](const Tensor& x) { return max(x); },
         all_samples(normal_values));
  reduce("min", {"ReshapeBackward", "MaxBackward"}, [](const Tensor& x) { return min(x); },
         all_samples(normal_values));
  reduce("max_dim", {"MaxBackward"}, [](const Tensor& x) { return max(x, -1).first; },
         along_dim_samples(normal_values));
  reduce("min_dim", {"MaxBackward"}, [](const Tensor& x) { return min(x, 1, /*keepdim=*/true).first; },
         along_dim_samples(normal_values));
  reduce("softmax", {"SoftmaxBackward"}, [](const Tensor& x) { return softmax(x, -1); },
         [](Generator& g) { return unary_samples(g); });
  reduce("log_softmax", {"SoftmaxBackward"}, [](const Tensor& x) { return log_softmax(x, -1); },
         [](Generator& g) { return unary_samples(g); });
  // attention's weights: softmax(scale * scores), causal or not, over (…, Tq, Tk)
  auto scaled = [](bool causal) {
    return [causal](const Tensor& x) { return scaled_softmax(x, 0.7, causal); };
  };
  auto scores_samples = [](Generator& g) -> Samples {
    return {{"(Tq, Tk) = (3, 3)", {normal_leaf(g, {3, 3})}},
            {"(B, h, Tq, Tk), Tq != Tk", {normal_leaf(g, {2, 2, 2, 3})}},
            {"non-contiguous (transposed)", {transposed(normal_values(g, {4, 4}))}},
            {"zero-size", {normal_leaf(g, {0, 3, 3})}}};
  };
  reduce("scaled_softmax", {"SoftmaxBackward"}, scaled(false), scores_samples);
  reduce("scaled_softmax(causal)", {"SoftmaxBackward"}, scaled(true), scores_samples);
}

}  // namespace ember::samples
