func.func @f(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = ascend.Transpose %x {perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}
