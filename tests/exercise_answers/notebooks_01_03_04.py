"""Answers to the exercises of notebooks 01, 03 and 04. ``right``: name -> source; ``wrong``:
name -> (source, words of the message). ``seeds``: how many seeds each is run with (training
answers: 5, each run's seeds shifted)."""

ANSWERS = {
    "01.1": dict(
        seeds=5,
        right={
            "forward_backward": """
my_mod = mxlearn.Module(net, context=ctx)
my_mod.bind(my_train.provide_data, my_train.provide_label)
my_mod.init_params(mx.init.Xavier())
my_mod.init_optimizer(optimizer='sgd', optimizer_params=(('learning_rate', 0.1),))
for epoch in range(3):
    my_train.reset()
    for batch in my_train:
        my_mod.forward_backward(batch)   # MXNet's forward and backward in one call
        my_mod.update()
""",
            "datadesc_and_a_while_loop": """
my_mod = mxlearn.Module(symbol=net, context=ctx, data_names=['data'], label_names=['softmax_label'])
my_mod.bind(data_shapes=[mx.io.DataDesc('data', (50, 16))],
            label_shapes=[mx.io.DataDesc('softmax_label', (50,))])
my_mod.init_params(initializer=mx.init.Xavier())
my_mod.init_optimizer(optimizer=mx.optimizer.SGD(learning_rate=0.1, rescale_grad=1 / 50))
epoch = 0
while epoch < 3:
    my_train.reset()
    for batch in my_train:
        my_mod.forward(batch, is_train=True)
        my_mod.backward()
        my_mod.update()
    epoch += 1
""",
            "metric_updated_too": """
my_mod = mxlearn.Module(net, context=ctx)
my_mod.bind(my_train.provide_data, my_train.provide_label)
my_mod.init_params(mx.init.Xavier())
my_mod.init_optimizer(optimizer_params={'learning_rate': 0.1})
metric = mx.metric.Accuracy()
for epoch in range(3):
    my_train.reset()
    metric.reset()
    for batch in my_train:
        my_mod.forward(batch, is_train=True)
        my_mod.update_metric(metric, batch.label)
        my_mod.backward()
        my_mod.update()
""",
        },
        wrong={
            "fit": (
                """
my_mod = mxlearn.Module(net, context=ctx)
my_mod.fit(my_train, num_epoch=3, initializer=mx.init.Xavier(),
           optimizer_params={'learning_rate': 0.1})
""",
                "trained by fit",
            ),
            "no_reset": (
                """
my_mod = mxlearn.Module(net, context=ctx)
my_mod.bind(my_train.provide_data, my_train.provide_label)
my_mod.init_params(mx.init.Xavier())
my_mod.init_optimizer(optimizer_params={'learning_rate': 0.1})
my_train.reset()
for epoch in range(3):
    for batch in my_train:   # read to its end in the first epoch
        my_mod.forward(batch, is_train=True)
        my_mod.backward()
        my_mod.update()
""",
                "updates",
            ),
        },
    ),
    "01.2": dict(
        seeds=1,
        right={
            "datadesc": """
pred_mod = mxlearn.Module(net, context=ctx, label_names=None)   # MXNet's predictor idiom
pred_mod.bind(data_shapes=[mx.io.DataDesc('data', (64, 16))], for_training=False)
arg_params, aux_params = mod.get_params()
pred_mod.set_params(arg_params, aux_params, allow_missing=True)  # the label is no parameter
""",
            "init_then_set": """
pred_mod = mxlearn.Module(symbol=net, context=ctx)
pred_mod.bind([('data', (64, 16))], for_training=False)
pred_mod.init_params(arg_params=mod.get_params()[0], aux_params=mod.get_params()[1])
""",
            "checkpoint_load": """
import os
os.makedirs('runs', exist_ok=True)
mod.save_checkpoint('runs/pred', 1)
pred_mod = mxlearn.Module.load('runs/pred', 1, context=ctx)
pred_mod.bind(data_shapes=[('data', (64, 16))], for_training=False)
""",
        },
        wrong={
            "the_trained_module": ("pred_mod = mod", "for_training"),
            "fresh_weights": (
                """
pred_mod = mxlearn.Module(net, context=ctx)
pred_mod.bind(data_shapes=[('data', (64, 16))], for_training=False)
pred_mod.init_params()
""",
                "not the given ones",
            ),
        },
    ),
    "03.1": dict(
        seeds=1,
        right={
            "ndarray_style": """
def accuracy_by_hand(outputs, labels):
    return (mx.nd.argmax(outputs, axis=1) == mx.nd.array(labels)).mean().asscalar()
val_outputs = mod.predict(val_iter)
my_accuracy = accuracy_by_hand(val_outputs, labels_all[16000:])
""",
            "a_loop": """
def accuracy_by_hand(outputs, labels):
    scores = outputs.asnumpy()
    right = 0
    for row, label in zip(scores, labels):
        right += int(np.argmax(row) == label)
    return right / len(labels)
val_outputs = mod.predict(val_iter)
my_accuracy = accuracy_by_hand(val_outputs, labels_all[16000:])
""",
            "predict_an_array": """
def accuracy_by_hand(outputs, labels):
    return float((outputs.asnumpy().argmax(1) == np.asarray(labels)).sum()) / len(labels)
val_outputs = mod.predict(X_all[16000:])
my_accuracy = accuracy_by_hand(val_outputs, labels_all[16000:])
""",
        },
        wrong={
            "score_instead": (
                """
def accuracy_by_hand(outputs, labels):
    return mod.score(val_iter, 'acc')[0][1]
val_outputs = mod.predict(val_iter)
my_accuracy = accuracy_by_hand(val_outputs, labels_all[16000:])
""",
                "MXNet's metrics count for it",
            ),
            "mxnet_metric_inside": (
                """
def accuracy_by_hand(outputs, labels):
    metric = mx.metric.Accuracy()
    metric.update([mx.nd.array(labels)], [outputs])
    return metric.get()[1]
val_outputs = mod.predict(val_iter)
my_accuracy = accuracy_by_hand(val_outputs, labels_all[16000:])
""",
                "MXNet's metrics count for it",
            ),
            "metric_in_a_helper": (
                """
def _count(outputs, labels):
    return mxlearn.create_metric('acc')
def accuracy_by_hand(outputs, labels):
    metric = _count(outputs, labels)
    metric.update([mx.nd.array(labels)], [outputs])
    return metric.get()[1]
val_outputs = mod.predict(val_iter)
my_accuracy = accuracy_by_hand(val_outputs, labels_all[16000:])
""",
                "create_metric",
            ),
            "made_up_outputs": (  # the shape right, no predict: the accuracy copied from score
                """
def accuracy_by_hand(outputs, labels):
    return float(np.mean(outputs.asnumpy().argmax(axis=1) == labels))
val_outputs = mx.nd.zeros((4000, 26))
my_accuracy = mod.score(val_iter, 'acc')[0][1]
""",
                "not the module's predictions",
            ),
            "padded_rows_counted": (
                """
def accuracy_by_hand(outputs, labels):
    return float(np.mean(outputs.asnumpy().argmax(axis=1) == labels))
val_outputs = mod.predict(val64)
val_outputs = mx.nd.concat(val_outputs, val_outputs[:32], dim=0)  # the last batch's padding
my_accuracy = accuracy_by_hand(val_outputs[:4000], labels_all[16000:])
""",
                "predict gave shape",
            ),
        },
    ),
    "03.2": dict(
        seeds=1,
        right={
            "mxnet_metric": "top3 = mod.score(val_iter, mx.metric.TopKAccuracy(top_k=3))[0][1]",
            "dict_of_pairs": "top3 = dict(mod.score(val_iter, mxlearn.create_metric('top_k_accuracy', top_k=3)))['top_3_accuracy']",
            "by_hand": """
scores = mod.predict(val_iter).asnumpy()
top3 = float(np.mean([label in row.argsort()[-3:] for row, label in zip(scores, labels_all[16000:])]))
""",
        },
        wrong={
            "top_5": ("top3 = mod.score(val_iter, 'top_k_acc')[0][1]", "scoring"),
            "plain_accuracy": ("top3 = mod.score(val_iter, 'acc')[0][1]", "scoring"),
        },
    ),
    "04.1": dict(
        seeds=5,
        right={
            "module_load": """
begin = 5
resumed = mxlearn.Module.load(module_prefix, 5, context=ctx)
resumed.fit(train_iter, begin_epoch=begin, num_epoch=8, optimizer_params={'learning_rate': 0.1})
""",
            "set_params_first": """
begin = 5
sym, args, auxs = mxlearn.load_checkpoint(module_prefix, 5)
resumed = mxlearn.Module(sym, context=ctx)
resumed.bind(train_iter.provide_data, train_iter.provide_label)
resumed.set_params(args, auxs)
resumed.fit(train_iter, num_epoch=8, begin_epoch=begin, optimizer_params={'learning_rate': 0.1})
""",
            "init_params_given": """
begin = 5
sym, args, auxs = mx.model.load_checkpoint(module_prefix, begin)
resumed = mxlearn.Module(sym, context=ctx)
resumed.bind(train_iter.provide_data, train_iter.provide_label)
resumed.init_params(arg_params=args, aux_params=auxs)
resumed.init_optimizer(optimizer_params={'learning_rate': 0.1})
resumed.fit(train_iter, num_epoch=8, begin_epoch=begin, optimizer_params={'learning_rate': 0.1})
""",
        },
        wrong={
            "fresh_weights": (
                """
begin = 5
resumed = mxlearn.Module(net, context=ctx)
resumed.fit(train_iter, num_epoch=8, begin_epoch=begin, optimizer_params={'learning_rate': 0.1})
""",
                "fresh weights",
            ),
            "checkpoint_3": (
                """
begin = 5
sym, args, auxs = mx.model.load_checkpoint(module_prefix, 3)
resumed = mxlearn.Module(sym, context=ctx)
resumed.fit(train_iter, num_epoch=8, arg_params=args, aux_params=auxs, begin_epoch=begin,
            optimizer_params={'learning_rate': 0.1})
""",
                "other weights",
            ),
            "begin_6": (
                """
begin = 6
sym, args, auxs = mx.model.load_checkpoint(module_prefix, 5)
resumed = mxlearn.Module(sym, context=ctx)
resumed.fit(train_iter, num_epoch=8, arg_params=args, aux_params=auxs, begin_epoch=begin,
            optimizer_params={'learning_rate': 0.1})
""",
                "skip epochs",
            ),
        },
    ),
    "04.2": dict(
        seeds=1,
        setup="shutil.rmtree('runs/checkpoints/every2', ignore_errors=True)\n"
        "for _f in [f for f in os.listdir('runs/checkpoints') if f.startswith('every2')]:\n"
        "    os.remove(os.path.join('runs/checkpoints', _f))\n",
        right={
            "keyword_order_and_tuple": """
policy = mxlearn.Checkpoint(keep=2, period=2, prefix='runs/checkpoints/every2')
every2 = mxlearn.Module(net, context=ctx)
every2.fit(train_iter, num_epoch=6, optimizer_params={'learning_rate': 0.1}, checkpoint=policy)
kept_epochs = (6, 4)
""",
            "a_callback_list": """
every2 = mxlearn.Module(net, context=ctx)
every2.fit(train_iter, num_epoch=6, optimizer_params={'learning_rate': 0.1},
           callbacks=[mxlearn.Checkpoint('runs/checkpoints/every2', period=2, keep=2)])
kept_epochs = sorted(mxlearn.checkpoint.saved_epochs('runs/checkpoints/every2'))
""",
            "computed": """
every2 = mxlearn.Module(net, context=ctx)
every2.fit(train_iter, num_epoch=6, optimizer_params={'learning_rate': 0.1},
           checkpoint=mxlearn.Checkpoint('runs/checkpoints/every2', period=2, keep=2))
kept_epochs = list(range(2, 7, 2))[-2:]
""",
        },
        wrong={
            "every_epoch": (
                """
every2 = mxlearn.Module(net, context=ctx)
every2.fit(train_iter, num_epoch=6, optimizer_params={'learning_rate': 0.1},
           checkpoint=mxlearn.Checkpoint('runs/checkpoints/every2', keep=2))
kept_epochs = [4, 6]
""",
                "on disk are [5, 6]",
            ),
            "all_three_answered": (
                """
every2 = mxlearn.Module(net, context=ctx)
every2.fit(train_iter, num_epoch=6, optimizer_params={'learning_rate': 0.1},
           checkpoint=mxlearn.Checkpoint('runs/checkpoints/every2', period=2, keep=2))
kept_epochs = [2, 4, 6]
""",
                "newest 2",
            ),
        },
    ),
}
