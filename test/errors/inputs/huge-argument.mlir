func.func @f(%x: tensor<1000000x1000000xf32>) -> tensor<1000000x1000000xf32> {
  func.return %x : tensor<1000000x1000000xf32>
}
