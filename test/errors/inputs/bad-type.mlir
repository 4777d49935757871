func.func @f(%x: tensor<4xf33>) -> tensor<4xf32> {
  func.return %x : tensor<4xf32>
}
