// RUN: ascend-opt %s --split-input-file -p ascend-loss-scale | filecheck %s
// RUN: ascend-opt %s --split-input-file -p 'ascend-loss-scale{manager=fixed scale=128.0 drop-overflow-update=false optimizer=momentum}' | filecheck %s --check-prefix=FIXED
// RUN: ascend-opt %s --split-input-file -p 'ascend-loss-scale{preset=mindspore optimizer=adam lr=0.001}' | filecheck %s --check-prefix=MS
// RUN: not ascend-opt %s --split-input-file -p 'ascend-loss-scale{optimizer=rmsprop}' 2>&1 | filecheck %s --check-prefix=ERR
// COM: @train_step is MindSpore's seven-step flow: clear the float status, forward + backward with the
// COM: seed multiplied by the loss scale, gradients cast to fp32 and unscaled, overflow check, fp32
// COM: update, and on overflow the old parameters are kept while the scale backs off.

// CHECK-LABEL: func.func @train_step
// CHECK-SAME: (%[[W:.*]]: tensor<4x3xf32>, %[[X:.*]]: tensor<2x4xf32>, %[[L:.*]]: tensor<2x3xf32>, %[[S:.*]]: tensor<f32>, %[[GOOD:.*]]: tensor<i32>, %[[STEP:.*]]: tensor<i32>)
// CHECK-SAME: -> (tensor<4x3xf32>, tensor<f32>, tensor<f32>, tensor<i32>, tensor<i32>, tensor<i1>)
// CHECK-SAME: ascend.train_step = {params = 1 : i64, state = [], optimizer = "sgd", manager = "dynamic", init_scale = "65536.0"}
// CHECK: %[[ST:.*]] = ascend.NPUAllocFloatStatus
// CHECK-NEXT: %[[CL:.*]] = ascend.NPUClearFloatStatus %[[ST]]
// CHECK-NEXT: ascend.MatMulV2 %[[X]], %[[W]] {name = "fc"}
// CHECK: %[[SEED:.*]] = ascend.Const {{.*}}"gradients/seed"
// CHECK-NEXT: ascend.Mul %[[SEED]], %[[S]] {name = "loss_scale/scale_seed"}
// CHECK: %[[DW:.*]] = ascend.MatMulV2 %[[X]], %{{.*}} {transpose_x1 = true
// CHECK-NEXT: %[[G:.*]] = ascend.RealDiv %[[DW]], %[[S]] {name = "loss_scale/unscale/w"}
// CHECK-NEXT: ascend.NPUGetFloatStatus %[[CL]]
// CHECK: ascend.Mul %[[G]], %{{.*}} {name = "loss_scale/overflow/Mul"}
// CHECK: %[[IDX:.*]] = ascend.ArgMaxV2 %{{.*}} {dimension = 0 : i64, name = "loss_scale/overflow/ArgMaxV2"} : (tensor<2xf32>) -> tensor<i32>
// CHECK: %[[OV:.*]] = ascend.Cast %[[IDX]] {{.*}} -> tensor<f32>
// CHECK: %[[FLAG:.*]] = ascend.Cast %[[IDX]] {{.*}} -> tensor<i1>
// CHECK: %[[UPD:.*]] = ascend.ApplyGradientDescent %[[W]], %{{.*}}, %[[G]]
// CHECK: %[[WIDE:.*]] = ascend.Cast %[[UPD]] {{.*}} -> tensor<4x3xf64>
// CHECK: %[[SAFE:.*]] = ascend.Pow %[[WIDE]], %{{.*}} {name = "loss_scale/keep_on_overflow/w/Pow"}
// CHECK: %[[OLD:.*]] = ascend.Mul %[[W]], %[[OV]]
// CHECK: %[[NEWW:.*]] = ascend.Sub %[[OLD]], %{{.*}} {name = "loss_scale/keep_on_overflow/w/Sub"}
// CHECK: %[[NSTEP:.*]] = ascend.Cast %{{.*}} {name = "loss_scale/step/Cast_1"} : (tensor<f32>) -> tensor<i32>
// CHECK: ascend.Const dense<2.000000e+03> : tensor<f32> {name = "loss_scale/growth_interval"}
// CHECK: %[[NGOOD:.*]] = ascend.Cast %{{.*}} {name = "loss_scale/good_steps/Cast_1"} : (tensor<f32>) -> tensor<i32>
// CHECK: ascend.Const dense<2.000000e+00> : tensor<f32> {name = "loss_scale/growth_factor"}
// CHECK: ascend.Const dense<5.000000e-01> : tensor<f32> {name = "loss_scale/backoff_factor"}
// CHECK-NOT: min_scale
// CHECK: %[[NS:.*]] = ascend.Mul %{{.*}} {name = "loss_scale/update_scale/Mul_6"}
// CHECK-NEXT: func.return %[[NEWW]], %{{.*}}, %[[NS]], %[[NGOOD]], %[[NSTEP]], %[[FLAG]]

// COM: The fixed manager without drop-overflow-update always applies the update: no select, the scale
// COM: and counter pass through, the step always advances.
// FIXED-LABEL: func.func @train_step
// FIXED-SAME: (%w: tensor<4x3xf32>, %w_accum: tensor<4x3xf32>, %x: tensor<2x4xf32>, %labels: tensor<2x3xf32>, %loss_scale: tensor<f32>, %good_steps: tensor<i32>, %step: tensor<i32>)
// FIXED-SAME: state = ["zeros:0"], optimizer = "momentum", manager = "fixed", init_scale = "128.0"
// FIXED: %[[NW:.*]], %[[NACC:.*]] = ascend.ApplyMomentumD %w, %w_accum,
// FIXED-NOT: ascend.Pow
// FIXED: func.return %[[NW]], %[[NACC]], %{{.*}}, %loss_scale, %good_steps, %{{.*}}, %{{.*}} :

// COM: MindSpore's preset: init 2^24, floor 1; Adam's beta powers are state and advance per step.
// MS-LABEL: func.func @train_step
// MS-SAME: %w_m: tensor<4x3xf32>, %w_v: tensor<4x3xf32>, %beta1_power: tensor<f32>, %beta2_power: tensor<f32>
// MS-SAME: state = ["zeros:0", "zeros:0", "value:0.9", "value:0.999"], optimizer = "adam", manager = "dynamic", init_scale = "16777216.0"
// MS: ascend.Const dense<1.000000e-03> : tensor<f32> {name = "optimizer/lr"}
// MS: ascend.ApplyAdamD %w, %w_m, %w_v, %beta1_power, %beta2_power
// MS: ascend.Mul %beta1_power, %{{.*}} {name = "optimizer/beta_power/Mul"}
// MS: "loss_scale/keep_on_overflow/beta1_power/Add"
// MS: ascend.Const dense<1.000000e+00> : tensor<f32> {name = "loss_scale/min_scale"}
// MS-NEXT: ascend.Maximum

// ERR: ascend-opt: error: ascend-loss-scale: optimizer must be one of sgd, momentum, adam, got 'rmsprop'
func.func @forward(%w: tensor<4x3xf32>, %x: tensor<2x4xf32>, %labels: tensor<2x3xf32>) -> tensor<f32> {
  %y = ascend.MatMulV2 %x, %w {name = "fc"} : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  %l, %bp = ascend.SoftmaxCrossEntropyWithLogits %y, %labels : (tensor<2x3xf32>, tensor<2x3xf32>) -> (tensor<2xf32>, tensor<2x3xf32>)
  %m = ascend.ReduceMean %l {axes = array<i64: 0>, name = "loss"} : (tensor<2xf32>) -> tensor<f32>
  func.return %m : tensor<f32>
}

// -----

// COM: An fp16 forward (e.g. after ascend-precision): fp32 master weights are cast for it, the scale is
// COM: cast for the fp16 seed, and the fp16 gradients are cast to fp32 before unscaling.
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: (%[[W:.*]]: tensor<4x3xf32>, %{{.*}}: tensor<2x4xf16>
// CHECK: %[[WH:.*]] = ascend.Cast %[[W]] : (tensor<4x3xf32>) -> tensor<4x3xf16>
// CHECK: ascend.MatMulV2 %{{.*}}, %[[WH]]
// CHECK: %[[SEED:.*]] = ascend.Const dense<1.000000e+00> : tensor<f16> {name = "gradients/seed"}
// CHECK-NEXT: %[[SH:.*]] = ascend.Cast %{{.*}} : (tensor<f32>) -> tensor<f16>
// CHECK-NEXT: ascend.Mul %[[SEED]], %[[SH]] {name = "loss_scale/scale_seed"} : (tensor<f16>, tensor<f16>) -> tensor<f16>
// CHECK: %[[G32:.*]] = ascend.Cast %{{.*}} : (tensor<4x3xf16>) -> tensor<4x3xf32>
// CHECK-NEXT: ascend.RealDiv %[[G32]], %{{.*}} {name = "loss_scale/unscale/w"}
func.func @forward(%w: tensor<4x3xf16>, %x: tensor<2x4xf16>, %labels: tensor<2x3xf16>) -> tensor<f16> {
  %y = ascend.MatMulV2 %x, %w : (tensor<2x4xf16>, tensor<4x3xf16>) -> tensor<2x3xf16>
  %l, %bp = ascend.SoftmaxCrossEntropyWithLogits %y, %labels : (tensor<2x3xf16>, tensor<2x3xf16>) -> (tensor<2xf16>, tensor<2x3xf16>)
  %m = ascend.ReduceMean %l {axes = array<i64: 0>} : (tensor<2xf16>) -> tensor<f16>
  func.return %m : tensor<f16>
}
