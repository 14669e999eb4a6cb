"""Answers to the exercises of notebooks 02 and 05 (the form of notebooks_01_03_04)."""

BEST_EPOCH_FIT = """
train_iter.reset()
tracker = BestEpoch()
cb_mod = mxlearn.Module(net, context=ctx)
cb_mod.fit(train_iter, eval_data=val_iter, num_epoch=4, optimizer_params={'learning_rate': 0.1},
           callbacks=[tracker])
"""

ANSWERS = {
    "02.1": dict(
        seeds=3,  # runs of up to 30 epochs
        right={
            "early_stopping_object": """
mod3 = mxlearn.Module(net, context=ctx)
mod3.fit(train_iter, eval_data=val_iter, num_epoch=30, optimizer_params={'learning_rate': 0.1},
         callbacks=[mxlearn.EarlyStopping(patience=5)])
""",
            "keywords_reordered": """
mod3 = mxlearn.Module(symbol=net, context=ctx)
mod3.fit(train_data=train_iter, num_epoch=30, early_stopping=5, eval_data=val_iter,
         optimizer='sgd', optimizer_params=(('learning_rate', 0.1),), eval_metric='accuracy')
""",
            "mxnet_optimizer_object": """
mod3 = mxlearn.Module(net, context=ctx)
mod3.fit(train_iter, eval_data=val_iter, num_epoch=30, early_stopping=5,
         optimizer=mx.optimizer.SGD(learning_rate=0.1, rescale_grad=1 / 32))
""",
        },
        wrong={
            "no_stop": (
                """
mod3 = mxlearn.Module(net, context=ctx)
mod3.fit(train_iter, eval_data=val_iter, num_epoch=5, optimizer_params={'learning_rate': 0.1})
""",
                "5 epochs without a better",
            ),
            "patience_2": (
                """
mod3 = mxlearn.Module(net, context=ctx)
mod3.fit(train_iter, eval_data=val_iter, num_epoch=30, early_stopping=2,
         optimizer_params={'learning_rate': 0.1})
""",
                "5 epochs without a better",
            ),
        },
    ),
    "02.2": dict(
        seeds=5,
        right={
            "rate_0_1": """
scaled_train = mx.io.NDArrayIter(X_scaled[:16000], y[:16000], batch_size=32, shuffle=True)
scaled_mod = mxlearn.Module(net, context=ctx)
scaled_mod.fit(scaled_train, eval_data=val_scaled, num_epoch=3, optimizer_params={'learning_rate': 0.1})
""",
            "datadesc_iterator_and_adam_free": """
scaled_train = mx.io.NDArrayIter(data={'data': X_scaled[:16000]}, label={'softmax_label': y[:16000]},
                                 batch_size=32, shuffle=True)
scaled_mod = mxlearn.Module(symbol=net, context=ctx)
scaled_mod.fit(scaled_train, eval_data=val_scaled, num_epoch=3, optimizer='sgd',
               optimizer_params={'learning_rate': 0.5})
""",
            "rate_1_and_momentum": """
scaled_train = mx.io.NDArrayIter(X_scaled[:16000], y[:16000], 32, True)
scaled_mod = mxlearn.Module(net, context=ctx)
scaled_mod.fit(scaled_train, eval_data=val_scaled, num_epoch=3,
               optimizer_params={'learning_rate': 1.0})
""",
        },
        wrong={
            "raw_features": (
                """
scaled_train = mx.io.NDArrayIter(X[:16000], y[:16000], batch_size=32, shuffle=True)
scaled_mod = mxlearn.Module(net, context=ctx)
scaled_mod.fit(scaled_train, eval_data=val_scaled, num_epoch=3, optimizer_params={'learning_rate': 0.1})
""",
                "not 0.7",
            ),
            "fit_s_default_rate": (
                """
scaled_train = mx.io.NDArrayIter(X_scaled[:16000], y[:16000], batch_size=32, shuffle=True)
scaled_mod = mxlearn.Module(net, context=ctx)
scaled_mod.fit(scaled_train, eval_data=val_scaled, num_epoch=3)
""",
                "not 0.7",
            ),
        },
    ),
    "02.3": dict(
        seeds=1,
        right={
            "fits_names": """
class BestEpoch(mxlearn.Callback):
    def __init__(self):
        self.best_epoch, self.best_accuracy = None, None

    def on_validation_end(self, run, epoch):
        accuracy = run.history.last('acc', 'val')
        if self.best_accuracy is None or accuracy > self.best_accuracy:
            self.best_epoch, self.best_accuracy = epoch, accuracy
"""
            + BEST_EPOCH_FIT,
            "whole_curve_at_the_end": """
import numpy as np
class BestEpoch(mxlearn.Callback):
    def __init__(self):
        self.best_epoch, self.best_accuracy = None, None

    def on_train_end(self, run):
        epochs, values = run.history.series('accuracy', 'validation', 'epoch')
        best = int(np.nanargmax(values))
        self.best_epoch, self.best_accuracy = epochs[best], values[best]
"""
            + BEST_EPOCH_FIT,
            "epoch_done_and_a_list": """
class BestEpoch(mxlearn.Callback):
    def __init__(self):
        self.best_epoch, self.best_accuracy = None, float('-inf')

    def on_epoch_done(self, run, epoch):
        record = run.history.last_record('accuracy', 'validation')
        if record.value > self.best_accuracy:
            self.best_epoch, self.best_accuracy = record.epoch, record.value
"""
            + BEST_EPOCH_FIT,
        },
        wrong={
            "keeps_the_last": (
                """
class BestEpoch(mxlearn.Callback):
    def __init__(self):
        self.best_epoch, self.best_accuracy = None, None

    def on_validation_end(self, run, epoch):
        self.best_epoch, self.best_accuracy = epoch, run.history.last('accuracy', 'validation')
"""
                + BEST_EPOCH_FIT,
                "best_epoch=",
            ),
            "filled_after_fit": (
                """
class BestEpoch(mxlearn.Callback):
    def __init__(self):
        self.best_epoch, self.best_accuracy = None, None

    def on_train_begin(self, run):
        pass
"""
                + BEST_EPOCH_FIT
                + """
epochs, values = cb_mod.history.series('accuracy', 'validation', 'epoch')
tracker.best_accuracy = max(values)
tracker.best_epoch = epochs[values.index(tracker.best_accuracy)]
""",
                "Replayed by the check",
            ),
        },
    ),
    "05.1": dict(
        seeds=5,
        reads_english=("read_from_the_line",),  # parses the English line: not in zh
        right={
            "datadesc_and_keywords": """
mod2 = mxlearn.MutableModule(symbol=net, context=ctx, cache_size=2,
                             max_data_shapes=[mx.io.DataDesc('data', (16, 1, 32, 32))])
mod2.fit(train_iter, num_epoch=3, optimizer='sgd',
         optimizer_params={'momentum': 0.9, 'learning_rate': 0.1})
rebinds = mod2.inspector.rebinds
""",
            "read_from_the_line": """
mod2 = mxlearn.MutableModule(net, cache_size=2, max_data_shapes=[('data', (16, 1, 32, 32))],
                             max_label_shapes=[('softmax_label', (16,))], context=ctx)
mod2.fit(train_iter, optimizer_params={'learning_rate': 0.1, 'momentum': 0.9}, num_epoch=3)
line = mod2.inspector.text()
rebinds = int(line.split(' rebinds')[0].split()[-1])
""",
            "mxnet_optimizer": """
mod2 = mxlearn.MutableModule(net, context=ctx, max_data_shapes=[('data', (16, 1, 32, 32))],
                             cache_size=2)
mod2.fit(train_iter, num_epoch=3,
         optimizer=mx.optimizer.SGD(learning_rate=0.1, momentum=0.9, rescale_grad=1 / 16))
rebinds = mod2.inspector.misses
""",
        },
        wrong={
            "default_cache": (
                """
mod2 = mxlearn.MutableModule(net, context=ctx, max_data_shapes=[('data', (16, 1, 32, 32))])
mod2.fit(train_iter, optimizer_params={'learning_rate': 0.1, 'momentum': 0.9}, num_epoch=3)
rebinds = mod2.inspector.rebinds
""",
                "not 2",
            ),
            "shape_changes_for_rebinds": (
                """
mod2 = mxlearn.MutableModule(net, context=ctx, cache_size=2, max_data_shapes=[('data', (16, 1, 32, 32))])
mod2.fit(train_iter, optimizer_params={'learning_rate': 0.1, 'momentum': 0.9}, num_epoch=3)
rebinds = mod2.inspector.hits + mod2.inspector.misses
""",
                "rebinds = ",
            ),
        },
    ),
    "05.3": dict(
        seeds=3,
        right={
            "lambda_and_a_literal_key": """
wide = mxlearn.models.conv_net(num_classes=4, channels=16)
bmod = mx.mod.BucketingModule(lambda key: (wide, ['data'], ['softmax_label']),
                              default_bucket_key=(32, 32), context=ctx)
bmod.fit(train_iter, num_epoch=3, optimizer='sgd',
         optimizer_params={'momentum': 0.9, 'learning_rate': 0.1})
""",
            "bound_then_fit_with_validation": """
def bucket_net(bucket_key):
    symbol = mxlearn.models.conv_net(num_classes=4, channels=16)
    return symbol, ('data',), ('softmax_label',)

bmod = mx.mod.BucketingModule(sym_gen=bucket_net, default_bucket_key=train_iter.default_bucket_key,
                              context=ctx)
bmod.bind(data_shapes=train_iter.provide_data, label_shapes=train_iter.provide_label)
bmod.init_params(initializer=mx.init.Xavier())
bmod.fit(train_iter, eval_data=val_iter, num_epoch=3,
         optimizer_params={'learning_rate': 0.1, 'momentum': 0.9})
""",
            "largest_key_found_and_an_optimizer_object": """
def bucket_net(key):
    return mxlearn.models.conv_net(4, channels=16), ['data'], ['softmax_label']

keys = {batch.bucket_key for batch in train_iter}
train_iter.reset()
bmod = mx.mod.BucketingModule(bucket_net, max(keys), context=ctx)
bmod.fit(train_data=train_iter, num_epoch=3,
         optimizer=mx.optimizer.SGD(learning_rate=0.1, momentum=0.9, rescale_grad=1 / 16))
""",
        },
        wrong={
            "a_mutable_module": (
                """
bmod = mxlearn.MutableModule(mxlearn.models.conv_net(num_classes=4, channels=16), context=ctx,
                             max_data_shapes=[('data', (16, 1, 32, 32))])
bmod.fit(train_iter, num_epoch=3, optimizer_params={'learning_rate': 0.1, 'momentum': 0.9})
""",
                "BucketingModule",
            ),
            "the_smallest_as_default": (
                """
wide = mxlearn.models.conv_net(num_classes=4, channels=16)
bmod = mx.mod.BucketingModule(lambda key: (wide, ('data',), ('softmax_label',)),
                              default_bucket_key=(12, 12), context=ctx)
bmod.fit(train_iter, num_epoch=3, optimizer_params={'learning_rate': 0.1, 'momentum': 0.9})
""",
                "(32, 32)",
            ),
            "bound_not_trained": (
                """
wide = mxlearn.models.conv_net(num_classes=4, channels=16)
bmod = mx.mod.BucketingModule(lambda key: (wide, ('data',), ('softmax_label',)),
                              default_bucket_key=(32, 32), context=ctx)
bmod.bind(train_iter.provide_data, train_iter.provide_label)
bmod.init_params()
""",
                "train it on the data",
            ),
            "trained_on_the_largest_then_shown_the_rest": (
                """
wide = mxlearn.models.conv_net(num_classes=4, channels=16)
bmod = mx.mod.BucketingModule(lambda key: (wide, ('data',), ('softmax_label',)),
                              default_bucket_key=(32, 32), context=ctx)
bmod.fit(ShapeVaryingIter(train_groups[-1:], 16), num_epoch=3,
         optimizer_params={'learning_rate': 0.1, 'momentum': 0.9})
for batch in train_iter:
    bmod.forward(batch, is_train=False)
train_iter.reset()
""",
                "fewer than 3 epochs",
            ),
            "the_narrow_network": (
                """
bmod = mx.mod.BucketingModule(lambda key: (net, ('data',), ('softmax_label',)),
                              default_bucket_key=(32, 32), context=ctx)
bmod.fit(train_iter, num_epoch=3, optimizer_params={'learning_rate': 0.1, 'momentum': 0.9})
""",
                "other layers",
            ),
        },
    ),
    "05.2": dict(
        seeds=1,
        right={
            "datadesc_bind": """
mod40 = mxlearn.MutableModule(symbol=net, context=ctx,
                              max_data_shapes=[mx.io.DataDesc('data', (16, 1, 40, 40))])
mod40.bind(data_shapes=[mx.io.DataDesc('data', (16, 1, 40, 40))], for_training=False)
arg_params, aux_params = mod.get_params()
mod40.set_params(arg_params, aux_params)
""",
            "labels_bound_too": """
mod40 = mxlearn.MutableModule(net, context=ctx, max_data_shapes=[('data', (16, 1, 40, 40))])
mod40.bind([('data', (16, 1, 40, 40))], [('softmax_label', (16,))], for_training=False)
mod40.init_params(arg_params=mod.get_params()[0], aux_params=mod.get_params()[1])
""",
            "larger_still": """
mod40 = mxlearn.MutableModule(net, context=ctx, max_data_shapes=[('data', (16, 1, 48, 48))])
mod40.bind(data_shapes=[('data', (16, 1, 48, 48))], for_training=False)
mod40.set_params(*mod.get_params())
""",
        },
        wrong={
            "the_old_maximum": (
                """
mod40 = mxlearn.MutableModule(net, context=ctx, max_data_shapes=[('data', (16, 1, 32, 32))])
mod40.bind(data_shapes=[('data', (16, 1, 32, 32))], for_training=False)
mod40.set_params(*mod.get_params())
""",
                "refuses this batch",
            ),
            "fresh_weights": (
                """
mod40 = mxlearn.MutableModule(net, context=ctx, max_data_shapes=[('data', (16, 1, 40, 40))])
mod40.bind(data_shapes=[('data', (16, 1, 40, 40))], for_training=False)
mod40.init_params()
""",
                "not the given ones",
            ),
        },
    ),
}
