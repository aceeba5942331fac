// Every op on one tensor, listed once: its name, its parameters after the
// tensor, and how it passes them on. From this one list come both of its
// spellings (PyTorch's rule): the free function `ember::op(x, ...)`, declared
// by autograd/ops.h and defined in autograd/ops/<family>.cpp, and the method
// `x.op(...)`, declared by tensor/tensor.h and defined by
// autograd/tensor_methods.cpp as a call of the function. (The operators, the
// ops over a list of tensors and the layers' building blocks are declared in
// autograd/ops.h alone.)
//
//   EMBER_OP(return type, name, (parameters), (arguments))
//
// A default is written EMBER_DEFAULT(value): a declaration gets "= value", a
// definition nothing. The includer defines EMBER_OP; this file has no guard,
// as it is read once per use.
//
// views and copies (autograd/ops/view.cpp)
EMBER_OP(Tensor, to, (DType dt), (dt))  // differentiable between float32 and float64; bfloat16: storage only
EMBER_OP(Tensor, contiguous, (), ())
EMBER_OP(Tensor, clone, (), ())
EMBER_OP(Tensor, reshape, (const Shape& shape), (shape))  // a view when strides allow, else a copy
EMBER_OP(Tensor, view, (const Shape& shape), (shape))     // always a view; error if impossible
EMBER_OP(Tensor, transpose, (int64_t d0, int64_t d1), (d0, d1))
EMBER_OP(Tensor, permute, (const Shape& dims), (dims))
EMBER_OP(Tensor, unsqueeze, (int64_t d), (d))
EMBER_OP(Tensor, squeeze, (), ())           // all size-1 dims
EMBER_OP(Tensor, squeeze, (int64_t d), (d))  // that dim if it has size 1
EMBER_OP(Tensor, expand, (const Shape& shape), (shape))  // -1 keeps a size; new dims get stride 0
EMBER_OP(Tensor, narrow, (int64_t d, int64_t start, int64_t length), (d, start, length))
EMBER_OP(Tensor, slice, (int64_t d, int64_t start, int64_t end, int64_t step EMBER_DEFAULT(1)), (d, start, end, step))
EMBER_OP(Tensor, select, (int64_t d, int64_t index), (d, index))
EMBER_OP(Tensor, flatten, (int64_t start EMBER_DEFAULT(0), int64_t end EMBER_DEFAULT(-1)), (start, end))
// elementwise (autograd/ops/binary.cpp, unary.cpp)
EMBER_OP(Tensor, add, (const Tensor& other), (other))
EMBER_OP(Tensor, sub, (const Tensor& other), (other))
EMBER_OP(Tensor, mul, (const Tensor& other), (other))
EMBER_OP(Tensor, div, (const Tensor& other), (other))
EMBER_OP(Tensor, pow, (const Tensor& e), (e))
EMBER_OP(Tensor, pow, (double e), (e))
EMBER_OP(Tensor, maximum, (const Tensor& other), (other))
EMBER_OP(Tensor, minimum, (const Tensor& other), (other))
EMBER_OP(Tensor, neg, (), ())
EMBER_OP(Tensor, exp, (), ())
EMBER_OP(Tensor, log, (), ())
EMBER_OP(Tensor, sqrt, (), ())
EMBER_OP(Tensor, rsqrt, (), ())
EMBER_OP(Tensor, abs, (), ())
EMBER_OP(Tensor, sin, (), ())
EMBER_OP(Tensor, cos, (), ())
EMBER_OP(Tensor, tanh, (), ())
EMBER_OP(Tensor, sigmoid, (), ())
EMBER_OP(Tensor, relu, (), ())
EMBER_OP(Tensor, softplus, (), ())  // log(1 + e^x), a smooth relu; its derivative is sigmoid(x)
EMBER_OP(Tensor, erf, (), ())  // the error function, 2/sqrt(pi) * integral of exp(-t^2) from 0 to x
EMBER_OP(Tensor, clamp, (std::optional<double> lo, std::optional<double> hi), (lo, hi))
// comparisons: bool results, not differentiable
EMBER_OP(Tensor, eq, (const Tensor& other), (other))
EMBER_OP(Tensor, ne, (const Tensor& other), (other))
EMBER_OP(Tensor, lt, (const Tensor& other), (other))
EMBER_OP(Tensor, le, (const Tensor& other), (other))
EMBER_OP(Tensor, gt, (const Tensor& other), (other))
EMBER_OP(Tensor, ge, (const Tensor& other), (other))
EMBER_OP(Tensor, eq, (double s), (s))
EMBER_OP(Tensor, ne, (double s), (s))
EMBER_OP(Tensor, lt, (double s), (s))
EMBER_OP(Tensor, le, (double s), (s))
EMBER_OP(Tensor, gt, (double s), (s))
EMBER_OP(Tensor, ge, (double s), (s))
// selection (autograd/ops/select.cpp)
EMBER_OP(Tensor, masked_fill, (const Tensor& mask, double value), (mask, value))
EMBER_OP(Tensor, tril, (int64_t k EMBER_DEFAULT(0)), (k))
EMBER_OP(Tensor, triu, (int64_t k EMBER_DEFAULT(0)), (k))
// reductions (autograd/ops/reduce.cpp)
// sum_to: the sum down to `shape` (x's shape broadcast from it): the leading
// dims and the dims where shape has 1, which is what the engine does to a
// broadcast gradient, as a differentiable op
EMBER_OP(Tensor, sum_to, (const Shape& shape), (shape))
EMBER_OP(Tensor, sum, (), ())
EMBER_OP(Tensor, sum, (const Shape& dims, bool keepdim EMBER_DEFAULT(false)), (dims, keepdim))
EMBER_OP(Tensor, mean, (), ())
EMBER_OP(Tensor, mean, (const Shape& dims, bool keepdim EMBER_DEFAULT(false)), (dims, keepdim))
// var: the sample variance by default (correction = 1, like PyTorch)
EMBER_OP(Tensor, var, (const Shape& dims EMBER_DEFAULT({}), int64_t correction EMBER_DEFAULT(1),
                       bool keepdim EMBER_DEFAULT(false)), (dims, correction, keepdim))
EMBER_OP(Tensor, norm, (double p EMBER_DEFAULT(2.0), const Shape& dims EMBER_DEFAULT({}),
                        bool keepdim EMBER_DEFAULT(false)), (p, dims, keepdim))
EMBER_OP(Tensor, max, (), ())  // a 0-d tensor
EMBER_OP(Tensor, min, (), ())
EMBER_OP(TensorPair, max, (int64_t d, bool keepdim EMBER_DEFAULT(false)), (d, keepdim))  // values, indices
EMBER_OP(TensorPair, min, (int64_t d, bool keepdim EMBER_DEFAULT(false)), (d, keepdim))
EMBER_OP(Tensor, argmax, (), ())  // an index into the flattened tensor
EMBER_OP(Tensor, argmax, (int64_t d, bool keepdim EMBER_DEFAULT(false)), (d, keepdim))
// softmax, log_softmax: along dim d. A row of only -inf (a fully masked
// attention row) gives 0 everywhere (log_softmax: -inf), never NaN; a NaN in
// a row makes the row NaN.
EMBER_OP(Tensor, softmax, (int64_t d), (d))
EMBER_OP(Tensor, log_softmax, (int64_t d), (d))
// matmul (autograd/ops/matmul.cpp), PyTorch semantics
EMBER_OP(Tensor, matmul, (const Tensor& other), (other))
// indexing (autograd/ops/index.cpp); ids are int64 and bounds-checked
EMBER_OP(Tensor, index_select, (int64_t d, const Tensor& ids), (d, ids))
EMBER_OP(Tensor, gather, (int64_t d, const Tensor& ids), (d, ids))
// index_add, scatter_add: out of place and differentiable: x with src's
// slices added at ids along d (index_select's adjoint), and x with src's
// elements added at ids along d (gather's adjoint; ids and src have one
// shape). Repeated ids accumulate.
EMBER_OP(Tensor, index_add, (int64_t d, const Tensor& ids, const Tensor& src), (d, ids, src))
EMBER_OP(Tensor, scatter_add, (int64_t d, const Tensor& ids, const Tensor& src), (d, ids, src))
