// `canonicalize` with the ascend.Cast patterns (dialects/ascend/cast.py): an identity cast and an exact
// round trip through a wider float fold to the operand; f32 -> f16 -> f32 rounds, so it never folds; a
// cast of an inline float constant is a constant of the destination type (rounded to nearest even,
// out of range to inf); a cast of a dense_resource weight stays a cast. The numerics of the folds
// against numpy: test/dialects/test_cast.py.
// RUN: ascend-opt %s --split-input-file -p canonicalize | filecheck %s

// CHECK-LABEL: func.func @identity
// CHECK-NEXT:    func.return %x : tensor<4xf32>
func.func @identity(%x: tensor<4xf32>) -> tensor<4xf32> {
  %id = ascend.Cast %x : (tensor<4xf32>) -> tensor<4xf32>
  func.return %id : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @f16_round_trip
// CHECK-NEXT:    func.return %x : tensor<4xf16>
func.func @f16_round_trip(%x: tensor<4xf16>) -> tensor<4xf16> {
  %w = ascend.Cast %x : (tensor<4xf16>) -> tensor<4xf32>
  %n = ascend.Cast %w : (tensor<4xf32>) -> tensor<4xf16>
  func.return %n : tensor<4xf16>
}

// -----

// CHECK-LABEL: func.func @bf16_round_trip
// CHECK-NEXT:    func.return %b : tensor<4xbf16>
func.func @bf16_round_trip(%b: tensor<4xbf16>) -> tensor<4xbf16> {
  %w = ascend.Cast %b : (tensor<4xbf16>) -> tensor<4xf32>
  %n = ascend.Cast %w : (tensor<4xf32>) -> tensor<4xbf16>
  func.return %n : tensor<4xbf16>
}

// -----

// CHECK-LABEL: func.func @f32_through_f64
// CHECK-NEXT:    func.return %y : tensor<4xf32>
func.func @f32_through_f64(%y: tensor<4xf32>) -> tensor<4xf32> {
  %w = ascend.Cast %y : (tensor<4xf32>) -> tensor<4xf64>
  %n = ascend.Cast %w : (tensor<4xf64>) -> tensor<4xf32>
  func.return %n : tensor<4xf32>
}

// -----

// f32 -> f16 -> f32 rounds: both casts stay.
// CHECK-LABEL: func.func @lossy_round_trip_stays
// CHECK-NEXT:    %h = ascend.Cast %y : (tensor<4xf32>) -> tensor<4xf16>
// CHECK-NEXT:    %back = ascend.Cast %h : (tensor<4xf16>) -> tensor<4xf32>
// CHECK-NEXT:    func.return %back : tensor<4xf32>
func.func @lossy_round_trip_stays(%y: tensor<4xf32>) -> tensor<4xf32> {
  %h = ascend.Cast %y : (tensor<4xf32>) -> tensor<4xf16>
  %back = ascend.Cast %h : (tensor<4xf16>) -> tensor<4xf32>
  func.return %back : tensor<4xf32>
}

// -----

// A user's narrowing cast of an argument is kept, and so is the widening one of a result.
// CHECK-LABEL: func.func @user_cast_kept
// CHECK-NEXT:    %h = ascend.Cast %y : (tensor<4xf32>) -> tensor<4xf16>
// CHECK-NEXT:    %r = ascend.Relu %h : (tensor<4xf16>) -> tensor<4xf16>
// CHECK-NEXT:    %w = ascend.Cast %r : (tensor<4xf16>) -> tensor<4xf32>
// CHECK-NEXT:    func.return %w : tensor<4xf32>
func.func @user_cast_kept(%y: tensor<4xf32>) -> tensor<4xf32> {
  %h = ascend.Cast %y : (tensor<4xf32>) -> tensor<4xf16>
  %r = ascend.Relu %h : (tensor<4xf16>) -> tensor<4xf16>
  %w = ascend.Cast %r : (tensor<4xf16>) -> tensor<4xf32>
  func.return %w : tensor<4xf32>
}

// -----

// An inline constant folds through the cast; 0.1 rounds to nearest even, 70000 overflows f16 to inf.
// CHECK-LABEL: func.func @constant_folds
// CHECK-NEXT:    %ch = ascend.Const dense<[1.000000e+00, 9.997560e-02, 6.550400e+04, 0x7c00]> : tensor<4xf16>
// CHECK-NEXT:    %cb = ascend.Const dense<[1.000000e+00, 1.000980e-01, 6.553600e+04, 7.014400e+04]> : tensor<4xbf16>
// CHECK-NEXT:    func.return %ch, %cb : tensor<4xf16>, tensor<4xbf16>
// CHECK-NOT:     ascend.Cast
func.func @constant_folds() -> (tensor<4xf16>, tensor<4xbf16>) {
  %c = ascend.Const dense<[1.0, 0.1, 65504.0, 70000.0]> : tensor<4xf32>
  %ch = ascend.Cast %c : (tensor<4xf32>) -> tensor<4xf16>
  %cb = ascend.Cast %c : (tensor<4xf32>) -> tensor<4xbf16>
  func.return %ch, %cb : tensor<4xf16>, tensor<4xbf16>
}

// -----

// A weight blob stays one: the Cast of a dense_resource constant is left in place
// (ascend-store-low-weights narrows those, dense-resource.mlir).
// CHECK-LABEL: func.func @blob_cast_stays
// CHECK-NEXT:    %w = ascend.Const dense_resource<w> : tensor<4xf32> {name = "w"}
// CHECK-NEXT:    %h = ascend.Cast %w : (tensor<4xf32>) -> tensor<4xf16>
// CHECK-NEXT:    %y = ascend.Add %x, %h : (tensor<4xf16>, tensor<4xf16>) -> tensor<4xf16>
// CHECK-NEXT:    func.return %y : tensor<4xf16>
// CHECK:       w: "0x040000000000803f000000400000003f000040c0"
func.func @blob_cast_stays(%x: tensor<4xf16>) -> tensor<4xf16> {
  %w = ascend.Const dense_resource<w> : tensor<4xf32> {name = "w"}
  %h = ascend.Cast %w : (tensor<4xf32>) -> tensor<4xf16>
  %y = ascend.Add %x, %h : (tensor<4xf16>, tensor<4xf16>) -> tensor<4xf16>
  func.return %y : tensor<4xf16>
}

{-#
  dialect_resources: {
    builtin: {
      w: "0x040000000000803f000000400000003f000040c0"
    }
  }
#-}
