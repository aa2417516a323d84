"""Address-level records (ZIP+4 and street ranges) in compressed blocks, not a row each

Revision ID: 0021_address_blocks
Revises: 0020_vies

The address-level rows of ``local_rates`` of earlier imports are moved into
``address_blocks`` (``levy.store.rate_imports.AddressBlock``: up to ``BULK``, 50,000, per block,
in their import's order), then deleted from ``local_rates``, in the migration's
transaction. Downgrade moves them back.
"""

from alembic import op
import sqlalchemy as sa


revision = "0021_address_blocks"
down_revision = "0020_vies"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "address_blocks",
        sa.Column("import_id", sa.String(length=40), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("records", sa.Integer(), nullable=False),
        sa.Column("data", sa.LargeBinary(), nullable=False),
        sa.ForeignKeyConstraint(["import_id"], ["rate_imports.id"], name=op.f("fk_address_blocks_import_id_rate_imports")),
        sa.PrimaryKeyConstraint("import_id", "seq", name=op.f("pk_address_blocks")),
    )
    _move_rows_into_blocks(op.get_bind())


def downgrade() -> None:
    _move_blocks_into_rows(op.get_bind())
    op.drop_table("address_blocks")


def _move_rows_into_blocks(conn: sa.engine.Connection) -> None:
    # The code's own encoding: the format a block is read with (its "format" number says which).
    from levy.store.rate_imports import BULK, AddressBlock, _decoder
    from levy.store.tables.areas import address_blocks, local_rates

    address = sa.or_(local_rates.c.street_name.is_not(None), local_rates.c.plus4_low.is_not(None))
    imports = [r[0] for r in conn.execute(sa.select(local_rates.c.import_id).where(address).distinct())]
    for import_id in sorted(imports):
        decode, encoded, seq, last = _decoder(), {}, 0, 0
        while True:  # one block at a time in memory
            rows = conn.execute(
                sa.select(local_rates).where(address, local_rates.c.import_id == import_id, local_rates.c.id > last)
                .order_by(local_rates.c.id).limit(BULK)
            ).all()
            if not rows:
                break
            block = AddressBlock.of([decode(r) for r in rows], encoded)
            seq, last = seq + 1, rows[-1].id
            conn.execute(sa.insert(address_blocks).values(import_id=import_id, seq=seq, records=len(rows),
                                                          data=block.encode()))
        conn.execute(sa.delete(local_rates).where(address, local_rates.c.import_id == import_id))


def _move_blocks_into_rows(conn: sa.engine.Connection) -> None:
    from levy.store.rate_imports import COLUMNS, AddressBlock, _decoder, _record_values
    from levy.store.tables.areas import address_blocks, local_rates

    decode, encoded = _decoder(), {}
    for import_id, data in conn.execute(
            sa.select(address_blocks.c.import_id, address_blocks.c.data)
            .order_by(address_blocks.c.import_id, address_blocks.c.seq)).all():
        records = [decode(r) for r in AddressBlock.decode(data).columns(import_id)]
        conn.execute(sa.insert(local_rates), [dict(zip(COLUMNS, _record_values(import_id, r, encoded), strict=True))
                                              for r in records])
