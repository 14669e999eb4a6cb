"""Answers to the exercises of notebooks 06 and 07 (the form of notebooks_01_03_04)."""

DROPOUT_NET = """
drop = mx.sym.Variable('data')
for i in (1, 2):
    drop = mx.sym.FullyConnected(drop, name='fc%d' % i, num_hidden=512)
    drop = mx.sym.Activation(drop, name='relu%d' % i, act_type='relu')
    drop = mx.sym.Dropout(drop, name='drop%d' % i, p=0.5)
drop = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(drop, name='fc3', num_hidden=26), name='softmax')
"""

ANSWERS = {
    "06.1": dict(
        seeds=5,
        right={
            "context_list_and_tuple_settings": """
pair = mxlearn.Module(mxlearn.models.mlp(), context=mxlearn.context_list(2))
pair.fit(pair_train, eval_data=pair_val, num_epoch=2, kvstore='device',
         optimizer_params=(('learning_rate', 0.1), ('momentum', 0.5)))
""",
            "a_kvstore_object": """
pair = mxlearn.Module(symbol=mxlearn.models.mlp(), context=[contexts[0], contexts[1]])
pair.fit(pair_train, eval_data=pair_val, kvstore=mx.kv.create('device'), num_epoch=2,
         optimizer='sgd', optimizer_params={'learning_rate': 0.1, 'momentum': 0.5})
""",
            "the_intermediate_api": """
pair = mxlearn.Module(mxlearn.models.mlp(), context=contexts)
pair.bind(pair_train.provide_data, pair_train.provide_label)
pair.init_params()
pair.init_optimizer(kvstore='device', optimizer_params={'learning_rate': 0.1, 'momentum': 0.5})
pair.fit(pair_train, eval_data=pair_val, num_epoch=2, kvstore='device',
         optimizer_params={'learning_rate': 0.1, 'momentum': 0.5})
""",
        },
        wrong={
            "one_device": (
                """
pair = mxlearn.Module(mxlearn.models.mlp(), context=ctx)
pair.fit(pair_train, eval_data=pair_val, kvstore='device', num_epoch=2,
         optimizer_params={'learning_rate': 0.1, 'momentum': 0.5})
""",
                "not on",
            ),
            "local_kvstore": (
                """
pair = mxlearn.Module(mxlearn.models.mlp(), context=contexts)
pair.fit(pair_train, eval_data=pair_val, num_epoch=2,
         optimizer_params={'learning_rate': 0.1, 'momentum': 0.5})
""",
                "not by a kvstore of kind 'device'",
            ),
        },
    ),
    "06.2": dict(
        seeds=1,
        right={
            "datadesc_and_keywords": """
single = mxlearn.Module(mxlearn.models.mlp(), context=ctx)
single.bind(data_shapes=[mx.io.DataDesc('data', (64, 16))],
            label_shapes=[mx.io.DataDesc('softmax_label', (64,))], for_training=False)
arg_params, aux_params = two.get_params()
single.set_params(arg_params=arg_params, aux_params=aux_params)
""",
            "init_params_given": """
single = mxlearn.Module(symbol=mxlearn.models.mlp(), context=[ctx])
single.bind(pair_val.provide_data, pair_val.provide_label, for_training=False)
arg_params, aux_params = two.get_params()
single.init_params(arg_params=arg_params, aux_params=aux_params)
""",
            "through_a_checkpoint": """
two.save_checkpoint('runs/two', 3)
single = mxlearn.Module.load('runs/two', 3, context=ctx)
single.bind(pair_val.provide_data, pair_val.provide_label, for_training=False)
""",
        },
        wrong={
            "two_devices": (
                """
single = mxlearn.Module(mxlearn.models.mlp(), context=contexts)
single.bind(pair_val.provide_data, pair_val.provide_label, for_training=False)
single.set_params(*two.get_params())
""",
                "bound on",
            ),
            "fresh_weights": (
                """
single = mxlearn.Module(mxlearn.models.mlp(), context=ctx)
single.bind(pair_val.provide_data, pair_val.provide_label, for_training=False)
single.init_params()
""",
                "not the given ones",
            ),
        },
    ),
    "07.1": dict(
        seeds=5,
        right={
            "adam_object_and_labels": """
sgd_run = train(0.03, epochs=3)
adam_train, adam_val = letters()
adam_run = mxlearn.Module(symbol=net, context=ctx)
adam_run.fit(adam_train, eval_data=adam_val, eval_metric=['acc', 'ce'], num_epoch=3,
             optimizer='adam', optimizer_params=(('learning_rate', 0.003),))
optimizers = mxlearn.compare(sgd_run, adam_run, labels=['SGD', 'Adam'])
faster = min(('sgd', 'adam'), key=lambda o: -dict(zip(('sgd', 'adam'), [
    r.history.series('acc', 'val', 'epoch')[1][0] for r in (sgd_run, adam_run)]))[o])
""",
            "table_read": """
sgd_run = train(0.03, epochs=3)
adam_train, adam_val = letters()
adam_run = mxlearn.Module(net, context=ctx)
adam_run.fit(adam_train, eval_data=adam_val, num_epoch=3, eval_metric=['accuracy', 'ce'],
             optimizer='adam', optimizer_params={'learning_rate': 0.003})
optimizers = mxlearn.compare(sgd_run, adam_run)
first = {o: r.history.series('accuracy', 'validation', 'epoch')[1][0]
         for o, r in (('sgd', sgd_run), ('adam', adam_run))}
faster = max(first, key=first.get)
""",
            "capitalised_name": """
sgd_run = train(0.03, epochs=3)
adam_train, adam_val = letters()
adam_run = mxlearn.Module(net, context=ctx)
adam_run.fit(train_data=adam_train, eval_data=adam_val, eval_metric=['acc', 'ce'], num_epoch=3,
             optimizer='Adam', optimizer_params={'learning_rate': 0.003})   # MXNet reads any case
optimizers = mxlearn.compare(sgd_run, adam_run)
firsts = [run.history.series('accuracy', 'validation', 'epoch')[1][0] for run in (sgd_run, adam_run)]
faster = ['SGD', 'Adam'][int(firsts[1] > firsts[0])]
""",
        },
        wrong={
            "adam_at_sgd_s_rate": (
                """
sgd_run = train(0.03, epochs=3)
adam_train, adam_val = letters()
adam_run = mxlearn.Module(net, context=ctx)
adam_run.fit(adam_train, eval_data=adam_val, eval_metric=['acc', 'ce'], num_epoch=3,
             optimizer='adam', optimizer_params={'learning_rate': 0.03})
optimizers = mxlearn.compare(sgd_run, adam_run)
faster = 'sgd'
""",
                "learning rate 0.03, not 0.003",
            ),
            "one_epoch_each": (
                """
sgd_run = train(0.03, epochs=1)
adam_train, adam_val = letters()
adam_run = mxlearn.Module(net, context=ctx)
adam_run.fit(adam_train, eval_data=adam_val, eval_metric=['acc', 'ce'], num_epoch=1,
             optimizer='adam', optimizer_params={'learning_rate': 0.003})
optimizers = mxlearn.compare(sgd_run, adam_run)
faster = 'adam'
""",
                "trained 1 epochs, not 3",
            ),
            "the_slower_one": (  # told it is wrong, and not which run is right
                """
sgd_run = train(0.03, epochs=3)
adam_train, adam_val = letters()
adam_run = mxlearn.Module(net, context=ctx)
adam_run.fit(adam_train, eval_data=adam_val, eval_metric=['acc', 'ce'], num_epoch=3,
             optimizer='adam', optimizer_params={'learning_rate': 0.003})
optimizers = mxlearn.compare(sgd_run, adam_run)
first = {o: r.history.series('accuracy', 'validation', 'epoch')[1][0]
         for o, r in (('sgd', sgd_run), ('adam', adam_run))}
faster = min(first, key=first.get)
""",
                "read epoch 0 in the comparison's table",
            ),
        },
    ),
    "07.2": dict(
        seeds=5,
        right={
            "a_loop_of_layers": DROPOUT_NET
            + "my_fix = train(0.03, rows=500, epochs=40, symbol=drop)\n",
            "relu_ops_and_keywords": """
x = mx.sym.Variable('data')
x = mx.sym.Dropout(data=mx.sym.relu(mx.sym.FullyConnected(x, num_hidden=512, name='fc1')), p=0.5)
x = mx.sym.Dropout(data=mx.sym.relu(mx.sym.FullyConnected(x, num_hidden=512, name='fc2')), p=0.5)
drop = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(x, num_hidden=26, name='fc3'), name='softmax')
my_fix = train(0.03, rows=500, epochs=40, symbol=drop)
""",
            "copied_from_big": """
drop = mx.sym.Variable('data')
drop = mx.sym.FullyConnected(drop, name='fc1', num_hidden=512)
drop = mx.sym.Activation(drop, name='relu1', act_type='relu')
drop = mx.sym.Dropout(drop, name='drop1', p=0.5, mode='training')
drop = mx.sym.FullyConnected(drop, name='fc2', num_hidden=512)
drop = mx.sym.Activation(drop, name='relu2', act_type='relu')
drop = mx.sym.Dropout(drop, name='drop2', p=0.5, mode='training')
drop = mx.sym.FullyConnected(drop, name='fc3', num_hidden=26)
drop = mx.sym.SoftmaxOutput(drop, name='softmax')
my_fix = train(0.03, rows=500, epochs=40, symbol=drop)
""",
        },
        wrong={
            "no_dropout": ("my_fix = train(0.03, rows=500, epochs=40, symbol=big)\n", "Dropout"),
            "half_the_epochs": (
                DROPOUT_NET + "my_fix = train(0.03, rows=500, epochs=19, symbol=drop)\n",
                "not 40 epochs",
            ),
            "more_data_instead": (
                DROPOUT_NET.replace("p=0.5", "p=0.1")
                + "my_fix = train(0.03, rows=4000, epochs=20, symbol=drop)\n",
                "p=0.5",
            ),
        },
    ),
}
